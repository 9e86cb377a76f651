"""Runs a Python program with the drop-in switch on:
python -m disttune.triton [--existing] [--census] PROGRAM.py [ARGS...]."""

import atexit
import runpy
import sys

import disttune.triton

USAGE = ("usage: python -m disttune.triton [--existing] [--census] PROGRAM.py [ARGS...]\n"
         "Runs PROGRAM with every Triton autotuner it makes tuned by the disttune engine "
         "(docs/triton-dropin.md).\n"
         "  --existing  also take the autotuners already made when the switch turns on\n"
         "  --census    at exit, print to stderr how many autotuners the engine tuned, and each one\n"
         "              left to Triton with its reason\n")


def main() -> None:
    arguments = sys.argv[1:]
    flags = set()
    while arguments and arguments[0] in ("--existing", "--census"):
        flags.add(arguments.pop(0))
    if not arguments or arguments[0] in ("-h", "--help"):
        sys.stdout.write(USAGE)
        sys.exit(0 if arguments else 2)
    disttune.triton.install(existing="--existing" in flags)
    if "--census" in flags:
        atexit.register(lambda: sys.stderr.write(disttune.triton.census_table()))
    sys.argv = arguments
    runpy.run_path(arguments[0], run_name="__main__")


if __name__ == "__main__":
    main()
