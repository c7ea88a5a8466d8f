#!/usr/bin/env python3
"""Writes the HaX-CoNN pair scenarios (tests/validation/README.md, "HaX-CoNN multi-DNN ranking"): per pair, both
networks on the GPU, one network per unit (HaX-CoNN's GPU&DLA baseline) and HaX-CoNN's published layer split.

Run from this folder: python3 make_scenarios.py. The pairs, placements and transition layers are those of
github.com/ismetdagli/HaX-CoNN at 87f5f25, src/summarize_multi_dnn_executions.py (Exp1-Exp4).
"""

# pair: (experiment, title, [(stage, network file), ...], GPU&DLA units, HaX-CoNN's schedule, its note).
# A schedule entry: (start unit, first layer of the part on the other unit). The note names HaX-CoNN's engines
# (the TensorRT layer index where each network moves to the other unit) and the layers they map to here.
PAIRS = {
    "alexnet_resnet101": (
        "Exp3", "AlexNet + ResNet-101", [("alexnet", "alexnet_227"), ("resnet101", "resnet101_224")],
        ["gpu", "dla0"], [("gpu", "relu6"), ("dla0", "maxpool")],
        "alexnet_gpu_transition_at_16, resnet101_dla_transition_at_4 (TensorRT layer indices; the first layer of the "
        "second part here: alexnet from relu6, resnet101 from maxpool)"),
    "vgg19_resnet152": (
        "Exp4", "VGG-19 + ResNet-152", [("vgg19", "vgg19_224"), ("resnet152", "resnet152_224")],
        ["dla0", "gpu"], [("dla0", "pool2"), ("gpu", "s4b0_c3")],
        "vgg19_dla_transition_at_9, resnet152_gpu_transition_at_165 (TensorRT layer indices; the first layer of the "
        "second part here: vgg19 from pool2, resnet152 from s4b0_c3)"),
    "googlenet_resnet101": (
        "Exp1", "GoogLeNet + ResNet-101", [("googlenet", "googlenet_224"), ("resnet101", "resnet101_224")],
        ["gpu", "dla0"], [("gpu", "inception_4c_output"), ("dla0", "conv1_relu")],
        "googlenet_gpu_transition_at_80, resnet101_dla_transition_at_3 (TensorRT layer indices; the first layer of "
        "the second part here: googlenet from inception_4c_output, resnet101 from conv1_relu)"),
    "inception_resnet152": (
        "Exp2", "Inception-v4 + ResNet-152", [("inception", "inception_v4_299"), ("resnet152", "resnet152_224")],
        ["dla0", "gpu"], [("gpu", "inception_c1_1x1_2_relu"), ("dla0", "s5b0_c3")],
        "inception_gpu_transition_at_510, resnet152_dla_transition_at_636 (TensorRT layer indices; the first layer "
        "of the second part here: inception from inception_c1_1x1_2_relu, resnet152 from s5b0_c3)"),
}
OTHER = {"gpu": "dla0", "dla0": "gpu"}
# The runtime profile every scenario lays over the Xavier file (written by `framesim calibrate --totals`).
RUNTIME = "../../../hardware/runtimes/jetson_agx_xavier_32gb_tensorrt-7.1.yaml"


def scenario(pair, placement):
    exp, title, stages, gpu_dla, schedule, note = PAIRS[pair]
    names = [s for s, _ in stages]
    if placement == "gpu_only":
        units, splits, what = ["gpu", "gpu"], [None, None], "both networks on the GPU."
    elif placement == "gpu_dla":
        units, splits = gpu_dla, [None, None]
        what = f"{names[0]} on {units[0]}, {names[1]} on {units[1]} (HaX-CoNN's GPU&DLA baseline)."
    else:
        units = [u for u, _ in schedule]
        splits = [(at, OTHER[u]) for u, at in schedule]
        what = f"HaX-CoNN's published schedule: {note}."
    L = ["# yaml-language-server: $schema=../../../docs/schema/scenario.schema.json",
         f"# HaX-CoNN {exp}: {title} on a Jetson AGX Xavier, FP16, batch 1: {what}",
         "# Both networks start together on each camera frame (20 Hz: the SoC drains between frames); the",
         "# `done` stage waits for both, so its path latency is the time until both have finished.",
         "# Written by make_scenarios.py; see tests/validation/README.md, \"HaX-CoNN multi-DNN ranking\".",
         f"name: haxconn-{pair}-{placement.replace('_', '-')}",
         f"description: \"HaX-CoNN {exp}: {title}, {placement.replace('_', ' ')}, Jetson AGX Xavier\"",
         "hardware: ../../../hardware/jetson_agx_xavier_32gb.yaml",
         "# TensorRT 7.1 FP16 efficiencies fitted on single-network runs only (GoogLeNet alone on the GPU and on DLA 0;",
         "# standalone_gpu.csv, standalone_dla.csv), never on these pair figures:",
         f"runtime: {RUNTIME}", "networks:"]
    L += [f"  {s}: {{file: ../networks/{f}.yaml, precision: fp16}}" for s, f in stages]
    L += ["seed: 1", "duration: \"2 s\"", "warmup: \"0.2 s\"", "sensors:", "  camera: {rate: \"20 Hz\"}", "stages:"]
    for s, unit, split in zip(names, units, splits):
        L += [f"  {s}:", f"    unit: {unit}", "    inputs: [camera]", f"    network: {s}",
              "    queue: {depth: 1, overflow: drop_oldest}"]
        if split:
            L.append(f"    split: {{at: {split[0]}, unit: {split[1]}}}")
    L += ["  done:", "    unit: cpu", f"    inputs: [{', '.join(names)}]", "    work: {time: \"1 us\"}"]
    return L


if __name__ == "__main__":
    for pair in PAIRS:
        for placement in ("gpu_only", "gpu_dla", "haxconn"):
            with open(f"{pair}_{placement}.yaml", "w") as f:
                f.write("\n".join(scenario(pair, placement)) + "\n")
