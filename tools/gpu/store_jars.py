#!/usr/bin/env python3
"""Rewrites each jar named on the command line with its entries stored rather than deflated, in the same order and
with the same names, times and attributes. tools/gpu/bundle.sh runs it on the jars it packs: xz then compresses the
class files themselves rather than deflate's output (the app's dependency jars: 18.5 MB under xz as built, 9.0 MB
stored), and the JVM reads a stored jar as it reads a deflated one."""
import os
import sys
import warnings
import zipfile

# Some jars hold an entry twice (META-INF/ in a few); they are copied as they are.
warnings.filterwarnings("ignore", message="Duplicate name")

for path in sys.argv[1:]:
    stored = path + ".stored"
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(stored, "w", zipfile.ZIP_STORED) as target:
        for entry in source.infolist():
            copy = zipfile.ZipInfo(entry.filename, entry.date_time)
            copy.external_attr = entry.external_attr
            copy.create_system = entry.create_system
            target.writestr(copy, source.read(entry), compress_type=zipfile.ZIP_STORED)
    os.replace(stored, path)
