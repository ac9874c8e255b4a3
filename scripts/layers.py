#!/usr/bin/env python3
"""layers.py — the component layers of Harmonia: which folder may include which. Includes go down
only: prefix_sum/ and util/ at the bottom, key_region/ on them, psa/, ntg/ and cpu_update/ above,
harmonia/ (the front) on top; the tool (harmonia/cli/), the tests, the benchmarks and the fuzzers
sit above the library (the harmonia tool's folder, with the CLI support that harmonia-dist links,
uses nothing of dist/), the examples, dist/ and the Python extension (python/) use the public header
only. The table below is the
one statement of the rule; the build reads it twice:

  layers.py views SRC OUT   makes OUT/<folder>/ for each library folder, holding links to the
                            folders it may include (itself and those below it). meson compiles
                            each folder with -I OUT/<folder> and no other project path, so an
                            upward include does not compile ("No such file or directory").
  layers.py check SRC       reads every #include of the checked folders and exits 1, naming the
                            file, the line and the rule, on an include of a folder it may not
                            use or on a path through "..". meson runs it when it configures and
                            as the test 'layers'.
"""
import os
import re
import sys

# folder: the project folders it may include besides itself. Every folder may include the public
# header (include/harmonia.h) and system headers.
LIBRARY_LAYERS = {
    'util': [],
    'prefix_sum': [],
    'key_region': ['util', 'prefix_sum'],
    'psa': ['util'],
    'ntg': ['util', 'prefix_sum', 'key_region', 'psa'],
    'cpu_update': ['util', 'prefix_sum', 'key_region'],
    'harmonia': ['util', 'prefix_sum', 'key_region', 'psa', 'ntg', 'cpu_update'],
}
# users of the library that must keep to its public header (and the header-only utilities)
PUBLIC_ONLY = {
    'examples': [],
    'dist': ['util'],
    'python': [],
}
# the tools: above the library, they may include any of it, but the harmonia tool's folder (with the
# CLI support, cli_support, that harmonia-dist links) uses nothing of dist/: dist/cli/ depends on
# harmonia/cli/, never the reverse. folder: the folders (and public headers) it may not include.
TOOL_LAYERS = {
    'harmonia/cli': ['dist', 'dist/cli', 'harmonia_dist.h'],
    'dist/cli': [],
}
PROJECT_FOLDERS = set(LIBRARY_LAYERS) | {'harmonia/cli', 'tests', 'bench', 'fuzz', 'examples', 'dist', 'python',
                                         'include'}
SOURCE_ENDINGS = ('.c', '.h', '.cu', '.cuh')
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def folder_of_file(rel):
    """The checked folder a source file belongs to (harmonia/cli/ and dist/cli/ are tools, not the
    library: harmonia-dist shares the harmonia tool's file handling)."""
    if rel.startswith('harmonia/cli/'):
        return 'harmonia/cli'
    if rel.startswith('dist/cli/'):
        return 'dist/cli'
    top = rel.split('/', 1)[0]
    return top if (top in LIBRARY_LAYERS or top in PUBLIC_ONLY) else None


def folder_of_include(path):
    """The project folder an include path names, or None for system and public headers."""
    if path.startswith('harmonia/cli/'):
        return 'harmonia/cli'
    if path.startswith('dist/cli/'):
        return 'dist/cli'
    if '/' not in path:
        return None
    top = path.split('/', 1)[0]
    return top if top in PROJECT_FOLDERS else None


def includes(full, rel):
    """Each #include of a file: its path, where it stands (in words), and the problem of a ".." path."""
    with open(full, encoding='utf-8', errors='replace') as f:
        for number, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            path = m.group(2)
            where = '%s:%d: #include %s%s%s' % (rel, number, m.group(1), path, '>' if m.group(1) == '<' else '"')
            dots = '%s: includes go through the include paths, not ".."' % where if '..' in path.split('/') else None
            yield path, where, dots


def tool_problems(full, rel, owner):
    """The includes of a tool's file (harmonia/cli/, dist/cli/) against TOOL_LAYERS."""
    problems = []
    forbidden = TOOL_LAYERS[owner]
    for path, where, dots in includes(full, rel):
        if dots:
            problems.append(dots)
        elif folder_of_include(path) in forbidden or path in forbidden:
            problems.append('%s: %s/ may not include %s: dist/cli/ uses the harmonia tool\'s CLI support, '
                            'not the reverse (scripts/layers.py)' % (where, owner, path))
    return problems


def library_problems(full, rel, owner):
    """The includes of a library file against LIBRARY_LAYERS / PUBLIC_ONLY."""
    problems = []
    allowed = LIBRARY_LAYERS.get(owner, PUBLIC_ONLY.get(owner, []))
    for path, where, dots in includes(full, rel):
        if dots:
            problems.append(dots)
            continue
        target = folder_of_include(path)
        if target is None or target == owner or target == 'include':
            continue
        if target not in allowed:
            below = ', '.join(allowed) if allowed else 'no other folder'
            problems.append('%s: %s/ may include only %s (and the public header); '
                            '%s/ is not below it (scripts/layers.py)' % (where, owner, below, target))
    return problems


def check(src):
    problems = []
    for folder in sorted(set(LIBRARY_LAYERS) | set(PUBLIC_ONLY)):
        root = os.path.join(src, folder)
        if not os.path.isdir(root):
            continue
        for dirpath, _, names in os.walk(root):
            for name in sorted(names):
                if not name.endswith(SOURCE_ENDINGS):
                    continue
                full = os.path.join(dirpath, name)
                rel = os.path.relpath(full, src).replace(os.sep, '/')
                owner = folder_of_file(rel)
                if owner is None:
                    continue
                if owner in TOOL_LAYERS:
                    problems += tool_problems(full, rel, owner)
                else:
                    problems += library_problems(full, rel, owner)
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        print('layers.py: %d include(s) against the layers' % len(problems), file=sys.stderr)
        return 1
    return 0


def views(src, out):
    for folder, below in LIBRARY_LAYERS.items():
        view = os.path.join(out, folder)
        os.makedirs(view, exist_ok=True)
        wanted = set([folder] + below)
        for name in os.listdir(view):
            if name not in wanted:
                os.remove(os.path.join(view, name))
        for name in wanted:
            link = os.path.join(view, name)
            target = os.path.abspath(os.path.join(src, name))
            if os.path.islink(link) and os.readlink(link) == target:
                continue
            if os.path.lexists(link):
                os.remove(link)
            os.symlink(target, link)
    return 0


def main(argv):
    if len(argv) == 3 and argv[1] == 'check':
        return check(argv[2])
    if len(argv) == 4 and argv[1] == 'views':
        return views(argv[2], argv[3])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == '__main__':
    sys.exit(main(sys.argv))
