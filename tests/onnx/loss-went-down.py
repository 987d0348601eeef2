#!/usr/bin/python3
"""Prints "loss went down" when a training run's final loss (its metrics
JSON) is below the loss before training (an `ampc run --outputs` file of the
same graph on the same batch); exits 1 otherwise.
Usage: loss-went-down.py OUTPUTS.safetensors METRICS.json"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import safetensors_io

before = float(safetensors_io.read(sys.argv[1])["loss"])
after = json.load(open(sys.argv[2]))["final_loss"]
print(f"loss {before:.4f} -> {after:.4f}")
if after < before:
    print("loss went down")
sys.exit(0 if after < before else 1)
