#!/usr/bin/env python3
"""prelink_static.py OUT WORKDIR LIB.a... — makes the installed static library libharmonia.a: the
component archives are linked into one relocatable object (ld -r), in which every defined symbol
but the public API's (harmonia_*) is then made local (objcopy: the hidden ones, and the global
inline variables and guards that CCCL's headers give default visibility), and that one object is
archived. A program linking libharmonia.a therefore
sees only harmonia_* defined, as with the shared library, and the component prefixes (kr_, ps_,
psa_, ntg_, upd_, hm_, ...) can never clash with its own symbols."""
import os
import shutil
import subprocess
import sys


def tool(name):
    path = shutil.which(os.environ.get(name.upper(), name))
    if not path:
        sys.exit('prelink_static.py: %s not found' % name)
    return path


def main(argv):
    if len(argv) < 4:
        sys.exit(__doc__)
    out, work, libs = argv[1], argv[2], argv[3:]
    os.makedirs(work, exist_ok=True)
    obj = os.path.join(work, 'harmonia-prelinked.o')
    subprocess.run([tool('ld'), '-r', '-o', obj, '--whole-archive'] + libs + ['--no-whole-archive'], check=True)
    subprocess.run([tool('objcopy'), '--localize-hidden', '--wildcard', '--keep-global-symbol=harmonia_*', obj],
                   check=True)
    if os.path.exists(out):
        os.remove(out)
    subprocess.run([tool('ar'), 'rcsD', out, obj], check=True)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
