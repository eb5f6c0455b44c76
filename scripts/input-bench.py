#!/usr/bin/env python3
"""`make bench-inputs`: the release sampler against large and hostile SFZ files, each in a
fresh process: seconds and peak memory above the process's own baseline (`sampler --version`),
against the bar docs/bad-input.md states (under a second; under 100 MB above the baseline
where the input names no large sample data). Prints a table; exits non-zero when a row misses.

Usage: scripts/input-bench.py PATH/TO/sampler [--runs N]
"""
import os
import subprocess
import sys
import tempfile


def measure(binary, args, cwd):
    """Seconds, peak RSS in MB and exit status of one fresh process, by GNU time (a child of
    this script would count the script's own memory: Linux keeps the peak across exec)."""
    with tempfile.NamedTemporaryFile("r") as out:
        p = subprocess.run(["/usr/bin/time", "-q", "-f", "%e %M", "-o", out.name, binary] + args, cwd=cwd,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        seconds, kilobytes = out.read().split()[-2:]
    return float(seconds), int(kilobytes) / 1024, p.returncode


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    binary = os.path.abspath(sys.argv[1])
    runs = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else 3
    work = tempfile.mkdtemp(prefix="sampler-input-bench-")

    # 99,000 regions (128 keys, 40 round robins, 20 velocity layers), each naming its sample
    # under another letter case (an empty file each: the import is measured, not decoding).
    big = os.path.join(work, "big")
    os.makedirs(os.path.join(big, "samples"))
    with open(os.path.join(big, "big.sfz"), "w") as f:
        f.write("<global> loop_mode=one_shot\n")
        for i in range(99_000):
            layer = i // 5120
            f.write(f"<region> sample=Samples/S{i}.WAV key={i % 128} seq_length=40 seq_position={i // 128 % 40 + 1}"
                    f" lovel={layer * 6 + 1} hivel={layer * 6 + 6}\n")
            open(os.path.join(big, "samples", f"s{i}.wav"), "w").close()

    # 20,000 regions under a <global> of 509 opcodes (inherited, never copied into each).
    inherit = os.path.join(work, "inherit")
    os.makedirs(inherit)
    open(os.path.join(inherit, "a.wav"), "w").close()
    with open(os.path.join(inherit, "inherit.sfz"), "w") as f:
        f.write("<global> loop_mode=one_shot " + " ".join(f"label_cc{i}=x{i}" for i in range(500))
                + " " + " ".join(f"amplitude_oncc{i + 1}=50" for i in range(8)) + " sw_last=24\n")
        for i in range(20_000):
            f.write(f"<region> sample=a.wav key={i % 100 + 28} seq_length=100 seq_position={i // 100 % 100 + 1}\n")

    # One 64 kB #define used 2,000,000 times (a 10 MB file).
    define = os.path.join(work, "define.sfz")
    with open(define, "w") as f:
        f.write("#define $BIG " + "x" * 65_000 + "\n<region> sample=a.wav key=36 ")
        f.write(" ".join("a=$BIG" for _ in range(2_000_000)) + "\n")

    # A 16 MB line of `$`.
    dollars = os.path.join(work, "dollars.sfz")
    with open(dollars, "w") as f:
        f.write("#define $A 1\n<region> sample=a.wav key=36 lovel=" + "$" * ((16 << 20) - 64) + "\n")

    # Four 16 MB includes of empty headers.
    headers = os.path.join(work, "headers")
    os.makedirs(headers)
    for i in range(4):
        with open(os.path.join(headers, f"h{i}.sfz"), "w") as f:
            f.write("<group>" * ((16 << 20) // 7 - 8))
    with open(os.path.join(headers, "top.sfz"), "w") as f:
        f.write("".join(f'#include "h{i}.sfz"\n' for i in range(4)))

    rows = [
        ("99,000 regions, samples under another letter case", ["import-sfz", "big.sfz", "--out", os.path.join(work, "big.json")], big, 0),
        ("20,000 regions under 509 <global> opcodes", ["import-sfz", "inherit.sfz", "--out", os.path.join(work, "inherit.json")], inherit, 0),
        ("a 64 kB #define used 2,000,000 times", ["validate", define], work, 1),
        ("a 16 MB line of $", ["validate", dollars], work, 1),
        ("four 16 MB includes of empty headers", ["validate", "top.sfz"], headers, 1),
    ]
    base = min(measure(binary, ["--version"], work)[1] for _ in range(3))
    print(f"sampler: {binary}")
    print(f"baseline (sampler --version): {base:.0f} MB")
    print(f"{'input':<52} {'seconds (min–max of ' + str(runs) + ')':<28} {'MB above baseline':<18} verdict")
    missed = False
    for name, args, cwd, expected in rows:
        results = [measure(binary, args, cwd) for _ in range(runs)]
        times = [r[0] for r in results]
        above = max(r[1] for r in results) - base
        status = {r[2] for r in results}
        ok = max(times) < 1.0 and above < 100 and status == {expected}
        missed |= not ok
        print(f"{name:<52} {min(times):.2f}–{max(times):.2f}{'':<18} {above:>6.0f}{'':<11} {'met' if ok else 'NOT met'}"
              + ("" if status == {expected} else f" (exit {sorted(status)}, expected {expected})"))
    subprocess.run(["rm", "-rf", work])
    sys.exit(1 if missed else 0)


if __name__ == "__main__":
    main()
