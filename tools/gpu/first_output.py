#!/usr/bin/env python3
"""Runs a command that generates one token and prints, on stderr of this script, the seconds from its start to the
last bytes it wrote to stdout (the token: both zse generate and llama-simple print it last) and to its exit, so that
two programs' first tokens compare without their exits. The command's stdout is read and dropped; its stderr goes
to FILE. Exit status: the command's.
Usage: first_output.py LABEL STDERR_FILE COMMAND..."""
import os
import subprocess
import sys
import time


def main():
    label, errors, command = sys.argv[1], sys.argv[2], sys.argv[3:]
    start = time.monotonic()
    last = None
    with open(errors, "wb") as err:
        child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=err)
        while True:
            chunk = os.read(child.stdout.fileno(), 65536)
            if not chunk:
                break
            last = time.monotonic()
        status = child.wait()
    end = time.monotonic()
    printed = f"{last - start:.2f} s" if last is not None else "nothing printed"
    print(f"process start -> first token printed ({label}): {printed}; -> exit {end - start:.2f} s")
    sys.exit(status)


main()
