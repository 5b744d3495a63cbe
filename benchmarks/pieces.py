"""What warm pieces (``-T N``) cost in size and what they gain in time.

For each file and N: the size of the piece set beside the one stream of ``-T 1``, the CPU
time of each step of the pipeline (the prefix, the hand-over of its state, each piece),
measured one after another so that a loaded machine does not blur them, and the wall time
that those figures give on N (and on 2) free cores.  Each piece is measured twice, compressed
and decompressed: as a Dask worker runs it (the model rebuilt from the state's bytes) and as a
forked local worker does (the parent's model in place, in a process forked for the piece).  ``--wall`` also runs
``compress_file(processes=N)`` for its wall time and checks that it wrote the same bytes.

    python benchmarks/pieces.py FILE... [--model cm] [--level 6] [--threads 2,4] [--wall]
"""
from __future__ import annotations

import argparse
import io
import json
import os
import resource
import time

import seqzip
from seqzip import decoder, pieces, pieceset, session


def _cpu(fn, *args):
    start = time.process_time()
    result = fn(*args)
    return result, time.process_time() - start


def _forked_cpu(fn, *args) -> float:
    """CPU seconds (user + system) of ``fn(*args)`` in a process forked for it, as a forked
    local worker runs a piece: with the parent's model in place, its pages copied as they are
    written (``pieces._forked_job``)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            pieces._INHERITED["in_place"] = True
            fn(*args)
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert status == 0, status
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def makespan(prefix: float, handover: float, piece_times: list[float], cores: int) -> float:
    """Wall time of the pipeline on ``cores`` free cores: the prefix and its state's
    hand-over serially, then the pieces in order on the first free core."""
    free = [0.0] * cores
    for t in piece_times:
        free[free.index(min(free))] += handover + t
    return prefix + max(free)


def measure(data: bytes, model: str, level: int, threads: int, wall: bool) -> dict:
    config = seqzip.models.make_config(model, level)
    if threads == 1:
        out, cpu = _cpu(lambda: seqzip.compress(data, level, model=model))
        _, decode_cpu = _cpu(seqzip.decompress, out)
        return {"threads": 1, "bytes": len(out), "cpu": cpu, "decode_cpu": decode_cpu}
    lengths = pieces.warm_layout(len(data), threads)
    _, profile, _ = session._scan_profile(io.BytesIO(data))
    alphabet = profile.alphabet
    # the variant chosen once from the whole input, as api.compress_file does for -T N
    config = session.coding_config(config, alphabet, profile)
    args = (model, config, 0, seqzip.container.DEFAULT_FRAME, alphabet)
    (first, model_after), prefix_cpu = _cpu(pieces.compress_first, data[:lengths[0]], *args)
    start, state_cpu = _cpu(session.state_bytes, model_after)
    # each piece as a Dask worker runs it (the model rebuilt from the state's bytes), and as a
    # forked local worker does (the parent's model in place, in a process forked for it)
    streams, piece_cpu, forked_cpu, at = [first], [], [], lengths[0]
    pieces._INHERITED["model"] = model_after
    for n in lengths[1:]:
        stream, cpu = _cpu(pieces.compress_warm_piece, data[at:at + n], start, *args)
        streams.append(stream)
        piece_cpu.append(cpu)
        forked_cpu.append(_forked_cpu(pieces.compress_warm_piece, data[at:at + n], None,
                                      *args))
        at += n
    index = pieceset.PieceSet(pieceset.WARM, tuple(lengths)).pack()
    packed = index + b"".join(streams)
    # decoding: piece 0 here, then the others from its state, both ways
    assert seqzip.decompress(packed) == data
    (_, kept), dprefix_cpu = _cpu(decoder.decompress_first, streams[0], None)
    dstart = session.state_bytes(kept)
    dpiece_cpu = [_cpu(decoder.decompress_piece, s, dstart, None)[1] for s in streams[1:]]
    pieces._INHERITED["model"] = kept
    dforked_cpu = [_forked_cpu(decoder.decompress_piece, s, None, None) for s in streams[1:]]
    pieces._INHERITED.clear()
    # the state's hand-over to a piece: rebuilding a model from its bytes (included in
    # piece_cpu and decode_piece_cpu; a forked local worker codes with the parent's model in
    # place instead, which forked_cpu and decode_forked_cpu hold)
    header = session.piece_header(seqzip.models.spec_by_name(model), config, 0,
                                  seqzip.container.DEFAULT_FRAME, alphabet, b"x")
    _, handover = _cpu(session.model_from_state, header, start)
    # what a forked worker paid before it coded in place: a copy of the parent's model
    copy, copy_cpu = _cpu(session.model_from_state, header, model_after)
    copy.close()
    report = {"threads": threads, "lengths": lengths, "bytes": len(packed),
              "prefix_cpu": prefix_cpu, "state_cpu": state_cpu, "handover_cpu": handover,
              "copy_cpu": copy_cpu,
              "state_bytes": len(start), "piece_cpu": piece_cpu, "forked_cpu": forked_cpu,
              "decode_prefix_cpu": dprefix_cpu, "decode_piece_cpu": dpiece_cpu,
              "decode_forked_cpu": dforked_cpu,
              # all the CPU of compress_file(processes=N) with forked workers
              "cpu": prefix_cpu + sum(forked_cpu),
              "decode_cpu": dprefix_cpu + sum(dforked_cpu)}
    # the same work done serially, estimated from this run (a load that changes between the
    # runs of -T 1 and -T N would otherwise show in the speed-up): no rebuilds
    report["serial_estimate_cpu"] = prefix_cpu + sum(piece_cpu) - handover * len(piece_cpu)
    report["decode_serial_estimate_cpu"] = (dprefix_cpu + sum(dpiece_cpu)
                                            - handover * len(dpiece_cpu))
    for cores in sorted({2, threads}):
        # the state's bytes made once, each piece rebuilding a model from them (Dask)
        report[f"wall_on_{cores}_cores"] = makespan(prefix_cpu + state_cpu, 0, piece_cpu,
                                                   cores)
        report[f"decode_wall_on_{cores}_cores"] = makespan(dprefix_cpu + state_cpu, 0,
                                                          dpiece_cpu, cores)
        # forked local workers: no state bytes, the parent's model in place
        report[f"forked_wall_on_{cores}_cores"] = makespan(prefix_cpu, 0, forked_cpu, cores)
        report[f"decode_forked_wall_on_{cores}_cores"] = makespan(dprefix_cpu, 0,
                                                                 dforked_cpu, cores)
    if wall:
        out = io.BytesIO()
        begin, cpu = time.perf_counter(), time.process_time()
        seqzip.compress_file(io.BytesIO(data), out, model=model, level=level,
                             processes=threads)
        report["wall"] = time.perf_counter() - begin
        report["wall_parent_cpu"] = time.process_time() - cpu
        assert out.getvalue() == packed, "compress_file wrote other bytes than the pipeline"
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", help="files; a+b+c: their concatenation")
    parser.add_argument("--model", default="cm")
    parser.add_argument("--level", type=int, default=6)
    parser.add_argument("--threads", default="2,4")
    parser.add_argument("--wall", action="store_true")
    options = parser.parse_args()
    for name in options.files:
        data = b"".join(open(part, "rb").read() for part in name.split("+"))
        rows = [measure(data, options.model, options.level, t, options.wall)
                for t in [1] + [int(t) for t in options.threads.split(",")]]
        serial = rows[0]
        for row in rows[1:]:
            row["size_cost_pct"] = 100 * (row["bytes"] / serial["bytes"] - 1)
            for key in [k for k in row if "wall_on" in k]:
                way = "decode_" if key.startswith("decode_") else ""
                what = key.replace("wall_", "")
                row["speedup_" + what] = serial[way + "cpu"] / row[key]
                row["same_run_speedup_" + what] = row[way + "serial_estimate_cpu"] / row[key]
        print(json.dumps({"file": name, "length": len(data), "rows": rows}), flush=True)


if __name__ == "__main__":
    main()
