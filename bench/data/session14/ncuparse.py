import csv, sys, collections
def load(path):
    lines = [l for l in open(path) if l.startswith('"')]
    rows = list(csv.reader(lines))
    h = rows[0]; idx = {n: i for i, n in enumerate(h)}
    k = collections.OrderedDict()
    for r in rows[1:]:
        kid = int(r[idx['ID']])
        d = k.setdefault(kid, {'name': r[idx['Kernel Name']], 'grid': r[idx['Grid Size']] if 'Grid Size' in idx else ''})
        d[r[idx['Metric Name']]] = (r[idx['Metric Value']], r[idx['Metric Unit']])
    return k
