"""The examples in the compiled modules' docstrings run (pytest's --doctest-modules collects
the .py modules; Cython modules are collected here)."""
import doctest
import importlib
import importlib.machinery
import importlib.util
import pkgutil

import pytest

import seqzip
import seqzip._kernels

COMPILED = ["seqzip._core"] + [  # the kernels' extension modules, in subpackages too
    info.name for info in pkgutil.walk_packages(seqzip._kernels.__path__, "seqzip._kernels.")
    if not info.ispkg and importlib.util.find_spec(info.name).origin.endswith(
        tuple(importlib.machinery.EXTENSION_SUFFIXES))
    and not info.name.endswith("_avx2")]  # another build of its namesake (whose examples run
# here), for CPUs with AVX2: importing it on a CPU without would stop the process


def test_every_kernel_module_is_collected():
    assert {"seqzip._kernels.ctw", "seqzip._kernels.order2", "seqzip._kernels.glnn",
            "seqzip._kernels.lstm", "seqzip._kernels.online", "seqzip._kernels.cm.kernel",
            "seqzip._kernels.cm.probes"} <= set(COMPILED)
    assert "seqzip._kernels.cm.checks" not in COMPILED  # a .py module: pytest collects it


@pytest.mark.parametrize("name", COMPILED)
def test_docstring_examples_run(name):
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    examples = 0
    for test in finder.find(module):
        runner.run(test)
        examples += len(test.examples)
    failed, attempted = runner.summarize(verbose=False)
    assert failed == 0
    assert examples > 0, f"{name} shows no runnable example"


# The library's public surface: every public function and class defined in these modules shows
# a runnable example in its docstring (pytest's --doctest-modules runs them).
LIBRARY = ["seqzip.api", "seqzip.files", "seqzip.incremental", "seqzip.decoder",
           "seqzip.predictor", "seqzip.bench", "seqzip.coder", "seqzip.container",
           "seqzip.pieceset", "seqzip.streaminfo", "seqzip.baselines", "seqzip.errors",
           "seqzip.models",
           "seqzip.models.base", "seqzip.models.cm", "seqzip.models.cm_config",
           "seqzip.models.cm_presets", "seqzip.models.ctw", "seqzip.models.experts",
           "seqzip.models.glnn", "seqzip.models.lstm", "seqzip.models.order2",
           "seqzip.research.dictionary", "seqzip.research.training", "seqzip.research.protocol",
           "seqzip.corpora", "seqzip.research.table1", "seqzip.research.glnn",
           "seqzip.reference.glnn", "seqzip.reference.lstm", "seqzip.reference.context",
           "seqzip.cli", "seqzip.reference.relu_rnn", "seqzip.research.recurrent"]


@pytest.mark.parametrize("name", LIBRARY)
def test_public_functions_and_classes_show_an_example(name):
    import inspect

    module = importlib.import_module(name)
    public = getattr(module, "__all__", None) or [n for n in vars(module) if not n.startswith("_")]
    missing = []
    for attr in public:
        obj = getattr(module, attr)
        if (inspect.isfunction(obj) or inspect.isclass(obj)) and obj.__module__ == name:
            if ">>>" not in (inspect.getdoc(obj) or ""):
                missing.append(attr)
    assert not missing, f"{name}: no example in {missing}"


def test_readme_streaming_prediction_example_runs(tmp_path, monkeypatch):
    """The README's library example works as written."""
    import pathlib
    import re

    readme = pathlib.Path(__file__).resolve().parent.parent / "README.md"
    block = re.search(r"## Streaming prediction.*?```python\n(.*?)```", readme.read_text(),
                      re.S).group(1)
    monkeypatch.chdir(tmp_path)
    exec(compile(block, "README.md", "exec"), {"print": lambda *a: None})
    assert (tmp_path / "ctw.sqm").exists()
