"""Rewrites a saved graph's cross entropy to reduction "none" and has the
graph weigh each row's loss by a const (1, 2, 3, ... over the rows) and take
their mean, which keeps the loss's name: a loss whose rows each get their
own dloss. Usage: per-row-loss.py IN.json OUT.json"""
import json
import sys

graph = json.load(open(sys.argv[1]))
node = next(n for n in graph["nodes"] if n["op"] == "softmax_cross_entropy")
loss = node["outputs"][0]
labels = next(v for v in graph["values"] if v["name"] == node["inputs"][1])
rows = labels["shape"]
count = 1
for d in rows:
    count *= d
node["attrs"]["reduction"] = "none"
node["outputs"] = [loss + ".rows"]
graph["values"].append({"name": "row_weight", "kind": "const", "dtype": "f32", "shape": rows,
                        "data": [float(1 + i % 3) for i in range(count)]})
graph["nodes"] += [
    {"name": "loss.weighed", "op": "mul", "inputs": [loss + ".rows", "row_weight"],
     "outputs": [loss + ".weighed"], "attrs": {}},
    {"name": "loss.mean", "op": "reduce_mean", "inputs": [loss + ".weighed"], "outputs": [loss],
     "attrs": {}},
]
json.dump(graph, open(sys.argv[2], "w"))
