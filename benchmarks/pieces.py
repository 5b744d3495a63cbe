"""What warm pieces (``-T N``) cost in size and what they gain in time.

For each file and N: the size of the piece set beside the one stream of ``-T 1``, the CPU
time of each step of the pipeline (the prefix, the hand-over of its state, each piece),
measured one after another in this process so that a loaded machine does not blur them, and
the wall time that those figures give on N (and on 2) free cores.  ``--wall`` also runs
``compress_file(processes=N)`` for its wall time and checks that it wrote the same bytes.

    python benchmarks/pieces.py FILE... [--model cm] [--level 6] [--threads 2,4] [--wall]
"""
from __future__ import annotations

import argparse
import io
import json
import time

import seqzip
from seqzip import decoder, pieces, pieceset, session


def _cpu(fn, *args):
    start = time.process_time()
    result = fn(*args)
    return result, time.process_time() - start


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
        return {"threads": 1, "bytes": len(out), "cpu": cpu}
    lengths = pieces.warm_layout(len(data), threads)
    _, alphabet, _ = session._scan(io.BytesIO(data))
    args = (model, config, 0, seqzip.container.DEFAULT_FRAME, alphabet)
    (first, model_after), prefix_cpu = _cpu(pieces.compress_first, data[:lengths[0]], *args)
    start, state_cpu = _cpu(session.state_bytes, model_after)
    streams, piece_cpu, at = [first], [], lengths[0]
    for n in lengths[1:]:
        stream, cpu = _cpu(pieces.compress_warm_piece, data[at:at + n], start, *args)
        streams.append(stream)
        piece_cpu.append(cpu)
        at += n
    index = pieceset.PieceSet(pieceset.WARM, tuple(lengths)).pack()
    packed = index + b"".join(streams)
    # decoding: piece 0 here, then the others from its state
    (_, kept), dprefix_cpu = _cpu(decoder.decompress_first, streams[0], None)
    dstart = session.state_bytes(kept)
    dpiece_cpu = [_cpu(decoder.decompress_piece, s, dstart, None)[1] for s in streams[1:]]
    # the state's hand-over to a piece: rebuilding a model from it (forked local workers copy
    # the parent's model instead, which costs about as much)
    header = session.piece_header(seqzip.models.spec_by_name(model), config, 0,
                                  seqzip.container.DEFAULT_FRAME, alphabet, b"x")
    _, handover = _cpu(session.model_from_state, header, start)
    report = {"threads": threads, "lengths": lengths, "bytes": len(packed),
              "prefix_cpu": prefix_cpu, "state_cpu": state_cpu, "handover_cpu": handover,
              "state_bytes": len(start), "piece_cpu": piece_cpu,
              "decode_prefix_cpu": dprefix_cpu, "decode_piece_cpu": dpiece_cpu,
              "cpu": prefix_cpu + state_cpu + sum(piece_cpu) + handover * len(piece_cpu)}
    # the same work done serially, estimated from this run (a load that changes between the
    # runs of -T 1 and -T N would otherwise show in the speed-up)
    report["serial_estimate_cpu"] = prefix_cpu + sum(piece_cpu)
    for cores in sorted({2, threads}):
        report[f"wall_on_{cores}_cores"] = makespan(prefix_cpu + state_cpu, handover,
                                                   piece_cpu, cores)
        # forked local workers inherit the model: no state bytes to make
        report[f"forked_wall_on_{cores}_cores"] = makespan(prefix_cpu, handover, piece_cpu,
                                                          cores)
        report[f"decode_wall_on_{cores}_cores"] = makespan(dprefix_cpu + state_cpu, handover,
                                                          dpiece_cpu, cores)
    if wall:
        out = io.BytesIO()
        begin = time.perf_counter()
        seqzip.compress_file(io.BytesIO(data), out, model=model, level=level,
                             processes=threads)
        report["wall"] = time.perf_counter() - begin
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
                row["speedup_" + key.replace("wall_", "")] = serial["cpu"] / row[key]
                row["same_run_speedup_" + key.replace("wall_", "")] = \
                    row["serial_estimate_cpu"] / row[key]
        print(json.dumps({"file": name, "length": len(data), "rows": rows}), flush=True)


if __name__ == "__main__":
    main()
