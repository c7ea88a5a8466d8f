#!/usr/bin/env python3
"""Writes the validation suite's networks (framesim network YAML) from their published architectures.

Run from this folder: python3 make_networks.py. Each file says where its architecture comes from; the layer
lists are generated because they are long and regular (ResNet-50, MobileNet), not because they are estimates.
"""


def conv(name, out, k, s=1, pad=None, dw=False, inp=None, bias=False):
    p = (k - 1) // 2 if pad is None else pad
    ks = f"[{k[0]}, {k[1]}]" if isinstance(k, tuple) else str(k)
    if isinstance(k, tuple):
        p = "same"
    src = f", input: {inp}" if inp else ""
    kind = "depthwise: true" if dw else f"out_channels: {out}"
    pad_txt = p if isinstance(p, str) else str(p)
    tail = ", bias: true" if bias else ""
    return f"  - {{name: {name}, op: conv2d{src}, {kind}, kernel: {ks}, stride: {s}, padding: {pad_txt}{tail}}}"


def bn_relu(name, act="relu"):
    return [f"  - {{name: {name}_bn, op: batchnorm}}", f"  - {{name: {name}_{act}, op: {act}}}"]


def residual_tail(n, main, prev, out, stride, downsample, down_bn):
    """The end of a residual block: the shortcut (a 1x1 convolution when `downsample`), the add, the ReLU."""
    L, skip = [], prev
    if downsample:
        L.append(conv(f"{n}_down", out, 1, stride, 0, inp=prev))
        skip = f"{n}_down"
        if down_bn:
            L.append(f"  - {{name: {n}_down_bn, op: batchnorm}}")
            skip = f"{n}_down_bn"
    L.append(f"  - {{name: {n}_add, op: add, inputs: [{main}, {skip}]}}")
    L.append(f"  - {{name: {n}_relu, op: relu}}")
    return L, f"{n}_relu"


def classifier_head(relu6, relu7):
    """AlexNet's and VGG's classifier: flatten, two 4096-wide linear layers with their ReLUs, 1000 classes."""
    return ["  - {name: flatten, op: flatten}",
            "  - {name: fc6, op: linear, out_features: 4096, bias: true}", f"  - {{name: {relu6}, op: relu}}",
            "  - {name: fc7, op: linear, out_features: 4096, bias: true}", f"  - {{name: {relu7}, op: relu}}",
            "  - {name: fc8, op: linear, out_features: 1000, bias: true}"]


def header(name, description, source, shape, notes):
    lines = [f"# {l}" for l in notes]
    lines += [f"name: {name}", f'description: "{description}"', f'source: "{source}"', "precision: fp32",
              "fusion: auto", "inputs:", f"  x: {shape}", "layers:"]
    return lines


def mobilenet_v1(name, width, size, classes, source, notes):
    ch = lambda c: max(8, int(c * width))
    L = header(name, f"MobileNet v1 {width} at {size}x{size}, {classes} classes", source, f"[1, 3, {size}, {size}]",
               notes)
    L.append(conv("conv0", ch(32), 3, 2))
    L += bn_relu("conv0", "relu6")
    plan = [(64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2)] + [(512, 1)] * 5 + [(1024, 2), (1024, 1)]
    for i, (c, s) in enumerate(plan, 1):
        L.append(conv(f"dw{i}", None, 3, s, dw=True))
        L += bn_relu(f"dw{i}", "relu6")
        L.append(conv(f"pw{i}", ch(c), 1))
        L += bn_relu(f"pw{i}", "relu6")
    L += ["  - {name: pool, op: global_avgpool}", "  - {name: flatten, op: flatten}",
          f"  - {{name: fc, op: linear, out_features: {classes}, bias: true}}"]
    return L


def resnet50(name, size, source, notes, blocks=(3, 4, 6, 3), depth=50):
    """ResNet v1 with bottleneck blocks (He et al. 2016, table 1): 50 (3, 4, 6, 3), 101 (3, 4, 23, 3), 152 (3, 8, 36, 3)."""
    L = header(name, f"ResNet-{depth} v1 at {size}x{size}, 1000 classes", source, f"[1, 3, {size}, {size}]", notes)
    L.append(conv("conv1", 64, 7, 2, 3))
    L += bn_relu("conv1")
    L.append("  - {name: maxpool, op: maxpool, kernel: 3, stride: 2, padding: 1}")
    prev, cin = "maxpool", 64
    for stage, (blocks, width, stride) in enumerate(zip(blocks, (64, 128, 256, 512), (1, 2, 2, 2)), 2):
        for b in range(blocks):
            n = f"s{stage}b{b}"
            s = stride if b == 0 else 1
            L.append(conv(f"{n}_c1", width, 1, 1, inp=prev))
            L += bn_relu(f"{n}_c1")
            L.append(conv(f"{n}_c2", width, 3, s))
            L += bn_relu(f"{n}_c2")
            L.append(conv(f"{n}_c3", width * 4, 1))
            L.append(f"  - {{name: {n}_c3_bn, op: batchnorm}}")
            tail, prev = residual_tail(n, f"{n}_c3_bn", prev, width * 4, s, b == 0, True)
            L += tail
    L += ["  - {name: pool, op: global_avgpool}", "  - {name: flatten, op: flatten}",
          "  - {name: fc, op: linear, out_features: 1000, bias: true}"]
    return L


def alexnet(name, source, notes):
    """AlexNet as in BVLC's Caffe bvlc_alexnet (one tower, groups of 2 on conv2/4/5 not modelled: dense convs)."""
    L = header(name, "AlexNet at 227x227, 1000 classes", source, "[1, 3, 227, 227]", notes)
    for i, (c, k, s, p) in enumerate([(96, 11, 4, 0), (256, 5, 1, 2), (384, 3, 1, 1), (384, 3, 1, 1),
                                      (256, 3, 1, 1)], 1):
        L.append(conv(f"conv{i}", c, k, s, p))
        L.append(f"  - {{name: relu{i}, op: relu}}")
        if i in (1, 2, 5):
            L.append(f"  - {{name: pool{i}, op: maxpool, kernel: 3, stride: 2}}")
    L += classifier_head("relu6", "relu7")
    return L


def resnet8(source, notes):
    L = header("mlperf_tiny_resnet8", "MLPerf Tiny image classification: ResNet-8 on 32x32 CIFAR-10", source,
               "[1, 3, 32, 32]", notes)
    L.append(conv("conv0", 16, 3))
    L += bn_relu("conv0")
    prev = "conv0_relu"
    for i, (c, s) in enumerate([(16, 1), (32, 2), (64, 2)], 1):
        L.append(conv(f"b{i}_c1", c, 3, s, inp=prev))
        L += bn_relu(f"b{i}_c1")
        L.append(conv(f"b{i}_c2", c, 3))
        L.append(f"  - {{name: b{i}_c2_bn, op: batchnorm}}")
        tail, prev = residual_tail(f"b{i}", f"b{i}_c2_bn", prev, c, s, s != 1, False)
        L += tail
    L += ["  - {name: pool, op: avgpool, kernel: 8, stride: 8}", "  - {name: flatten, op: flatten}",
          "  - {name: fc, op: linear, out_features: 10, bias: true}"]
    return L


def ds_cnn(source, notes):
    L = header("mlperf_tiny_ds_cnn", "MLPerf Tiny keyword spotting: DS-CNN on 49x10 MFCC", source,
               "[1, 1, 49, 10]", notes)
    L.append("  - {name: conv0, op: conv2d, out_channels: 64, kernel: [10, 4], stride: 2, padding: same}")
    L += bn_relu("conv0")
    for i in range(1, 5):
        L.append(conv(f"dw{i}", None, 3, 1, dw=True))
        L += bn_relu(f"dw{i}")
        L.append(conv(f"pw{i}", 64, 1))
        L += bn_relu(f"pw{i}")
    L += ["  - {name: pool, op: global_avgpool}", "  - {name: flatten, op: flatten}",
          "  - {name: fc, op: linear, out_features: 12, bias: true}"]
    return L


def fc_autoencoder(source, notes):
    L = header("mlperf_tiny_fc_autoencoder", "MLPerf Tiny anomaly detection: FC autoencoder, 640 inputs", source,
               "[1, 640]", notes)
    widths = [128, 128, 128, 128, 8, 128, 128, 128, 128]
    for i, w in enumerate(widths):
        L.append(f"  - {{name: fc{i}, op: linear, out_features: {w}, bias: true}}")
        L += bn_relu(f"fc{i}")
    L.append("  - {name: out, op: linear, out_features: 640, bias: true}")
    return L


def vgg(name, depth, source, notes):
    """VGG-16/19 (Simonyan and Zisserman 2015, table 1, configurations D and E) at 224x224, 1000 classes."""
    per_stage = {16: [2, 2, 3, 3, 3], 19: [2, 2, 4, 4, 4]}[depth]
    L = header(name, f"VGG-{depth} at 224x224, 1000 classes", source, "[1, 3, 224, 224]", notes)
    for stage, (n, c) in enumerate(zip(per_stage, [64, 128, 256, 512, 512]), 1):
        for i in range(1, n + 1):
            L.append(conv(f"conv{stage}_{i}", c, 3, 1, 1))
            L.append(f"  - {{name: conv{stage}_{i}_relu, op: relu}}")
        L.append(f"  - {{name: pool{stage}, op: maxpool, kernel: 2, stride: 2}}")
    L += classifier_head("fc6_relu", "fc7_relu")
    return L


# GoogLeNet's inception modules (Szegedy et al. 2015, table 1): name, #1x1, #3x3 reduce, #3x3, #5x5 reduce, #5x5,
# pool proj; a string is the 3x3 stride-2 max pooling between two groups of modules.
GOOGLENET_MODULES = [("3a", 64, 96, 128, 16, 32, 32), ("3b", 128, 128, 192, 32, 96, 64), "pool3",
                     ("4a", 192, 96, 208, 16, 48, 64), ("4b", 160, 112, 224, 24, 64, 64),
                     ("4c", 128, 128, 256, 24, 64, 64), ("4d", 112, 144, 288, 32, 64, 64),
                     ("4e", 256, 160, 320, 32, 128, 128), "pool4", ("5a", 256, 160, 320, 32, 128, 128),
                     ("5b", 384, 192, 384, 48, 128, 128)]


def ceil_maxpool(name, inp=None):
    """Caffe rounds a pooling's output size up: a 3x3 stride-2 window over 112 gives 56, as one more row and
    column of padding at the bottom and right give here."""
    src = f", input: {inp}" if inp else ""
    return f"  - {{name: {name}, op: maxpool{src}, kernel: 3, stride: 2, padding: [0, 0, 1, 1]}}"


def googlenet(name, source, notes):
    """GoogLeNet as BVLC Caffe's bvlc_googlenet deploy.prototxt: biased convolutions, each followed by its ReLU, the
    layers in the prototxt's order (branches 1x1, 3x3, 5x5, pool of each module); the two LRN layers are not
    modelled (framesim has no LRN op), nor the dropout before the classifier (inference: none)."""
    L = header(name, "GoogLeNet (Inception v1) at 224x224, 1000 classes", source, "[1, 3, 224, 224]", notes)
    L += [conv("conv1_7x7_s2", 64, 7, 2, 3, bias=True), "  - {name: conv1_relu_7x7, op: relu}",
          ceil_maxpool("pool1_3x3_s2"), conv("conv2_3x3_reduce", 64, 1, 1, 0, bias=True),
          "  - {name: conv2_relu_3x3_reduce, op: relu}", conv("conv2_3x3", 192, 3, 1, 1, bias=True),
          "  - {name: conv2_relu_3x3, op: relu}", ceil_maxpool("pool2_3x3_s2")]
    prev = "pool2_3x3_s2"
    for m in GOOGLENET_MODULES:
        if isinstance(m, str):
            L.append(ceil_maxpool(f"{m}_3x3_s2", prev))
            prev = f"{m}_3x3_s2"
            continue
        n, c1, r3, c3, r5, c5, cp = m
        n = f"inception_{n}"
        for out, k, reduce in ((c1, 1, None), (c3, 3, r3), (c5, 5, r5)):
            branch = f"{k}x{k}"
            if reduce:
                L.append(conv(f"{n}_{branch}_reduce", reduce, 1, 1, 0, inp=prev, bias=True))
                L.append(f"  - {{name: {n}_relu_{branch}_reduce, op: relu}}")
            L.append(conv(f"{n}_{branch}", out, k, 1, k // 2, inp=None if reduce else prev, bias=True))
            L.append(f"  - {{name: {n}_relu_{branch}, op: relu}}")
        L.append(f"  - {{name: {n}_pool, op: maxpool, input: {prev}, kernel: 3, stride: 1, padding: 1}}")
        L.append(conv(f"{n}_pool_proj", cp, 1, 1, 0, bias=True))
        L.append(f"  - {{name: {n}_relu_pool_proj, op: relu}}")
        outs = ", ".join(f"{n}_relu_{b}" for b in ("1x1", "3x3", "5x5", "pool_proj"))
        L.append(f"  - {{name: {n}_output, op: concat, inputs: [{outs}]}}")
        prev = f"{n}_output"
    L += ["  - {name: pool5_7x7_s1, op: global_avgpool}", "  - {name: flatten, op: flatten}",
          "  - {name: loss3_classifier, op: linear, out_features: 1000, bias: true}"]
    return L


# Inception-v4's blocks (Szegedy et al. 2017, figures 3-8) in the layer order of the Caffe prototxt HaX-CoNN ran
# (prototxt_input_files/inception.prototxt). Each item: name suffix, then for a convolution (with batchnorm and
# ReLU) its output channels, kernel, stride and padding, for a pooling "max" or "avg"; last, where it reads: "in"
# (the block's input), None (the item before it) or another item's suffix. CONCAT: the suffixes concatenated.
STEM1 = [("3x3_s2", 96, 3, 2, 0, "in"), ("pool", "max", 3, 2, 0, "in")]
STEM2 = [("3x3_reduce", 64, 1, 1, 0, "in"), ("3x3", 96, 3, 1, 0, None), ("1x7_reduce", 64, 1, 1, 0, "in"),
         ("1x7", 64, (1, 7), 1, 0, None), ("7x1", 64, (7, 1), 1, 0, None), ("3x3_2", 96, 3, 1, 0, None)]
STEM3 = [("3x3_s2", 192, 3, 2, 0, "in"), ("pool", "max", 3, 2, 0, "in")]
BLOCK_A = [("1x1_2", 96, 1, 1, 0, "in"), ("3x3_reduce", 64, 1, 1, 0, "in"), ("3x3", 96, 3, 1, 1, None),
           ("3x3_2_reduce", 64, 1, 1, 0, "in"), ("3x3_2", 96, 3, 1, 1, None), ("3x3_3", 96, 3, 1, 1, None),
           ("pool_ave", "avg", 3, 1, 1, "in"), ("1x1", 96, 1, 1, 0, None)]
REDUCTION_A = [("3x3", 384, 3, 2, 0, "in"), ("3x3_2_reduce", 192, 1, 1, 0, "in"), ("3x3_2", 224, 3, 1, 1, None),
               ("3x3_3", 256, 3, 2, 0, None), ("pool", "max", 3, 2, 0, "in")]
BLOCK_B = [("1x1_2", 384, 1, 1, 0, "in"), ("1x7_reduce", 192, 1, 1, 0, "in"), ("1x7", 224, (1, 7), 1, 0, None),
           ("7x1", 256, (7, 1), 1, 0, None), ("7x1_2_reduce", 192, 1, 1, 0, "in"), ("7x1_2", 192, (7, 1), 1, 0, None),
           ("1x7_2", 224, (1, 7), 1, 0, None), ("7x1_3", 224, (7, 1), 1, 0, None), ("1x7_3", 256, (1, 7), 1, 0, None),
           ("pool_ave", "avg", 3, 1, 1, "in"), ("1x1", 128, 1, 1, 0, None)]
REDUCTION_B = [("3x3_reduce", 192, 1, 1, 0, "in"), ("3x3", 192, 3, 2, 0, None), ("1x7_reduce", 256, 1, 1, 0, "in"),
               ("1x7", 256, (1, 7), 1, 0, None), ("7x1", 320, (7, 1), 1, 0, None), ("3x3_2", 320, 3, 2, 0, None),
               ("pool", "max", 3, 2, 0, "in")]
BLOCK_C = [("1x1_2", 256, 1, 1, 0, "in"), ("1x1_3", 384, 1, 1, 0, "in"), ("1x3", 256, (1, 3), 1, 0, None),
           ("3x1", 256, (3, 1), 1, 0, "1x1_3"), ("1x1_4", 384, 1, 1, 0, "in"), ("3x1_2", 448, (3, 1), 1, 0, None),
           ("1x3_2", 512, (1, 3), 1, 0, None), ("1x3_3", 256, (1, 3), 1, 0, None),
           ("3x1_3", 256, (3, 1), 1, 0, "1x3_2"), ("pool_ave", "avg", 3, 1, 1, "in"), ("1x1", 256, 1, 1, 0, None)]
CONCAT = {"stem1": ["pool", "3x3_s2"], "stem2": ["3x3", "3x3_2"], "stem3": ["3x3_s2", "pool"],
          "a": ["1x1_2", "3x3", "3x3_3", "1x1"], "reduction_a": ["3x3", "3x3_3", "pool"],
          "b": ["1x1_2", "7x1", "1x7_3", "1x1"], "reduction_b": ["3x3", "3x3_2", "pool"],
          "c": ["1x1_2", "1x3", "3x1", "1x3_3", "3x1_3", "1x1"]}


def inception_block(L, n, prev, items, concat, concat_name):
    """One Inception-v4 block named `n` reading `prev`; returns the name of its concatenation."""
    last, out = None, {}
    for suffix, width, k, s, p, src in items:
        x = prev if src == "in" else (last if src is None else out[src])
        name = f"{n}_{suffix}"
        if width in ("max", "avg"):
            L.append(f"  - {{name: {name}, op: {width}pool, input: {x}, kernel: {k}, stride: {s}, padding: {p}}}")
            last = out[suffix] = name
            continue
        L.append(conv(name, width, k, s, p, inp=x))
        L += bn_relu(name)
        last = out[suffix] = f"{name}_relu"
    L.append(f"  - {{name: {concat_name}, op: concat, inputs: [{', '.join(out[c] for c in concat)}]}}")
    return concat_name


def inception_v4(name, source, notes):
    """Inception-v4 at 299x299: convolutions without bias, each followed by batchnorm and ReLU (Caffe's BatchNorm +
    Scale, one batchnorm here); the dropout before the classifier is not modelled (inference: none)."""
    L = header(name, "Inception-v4 at 299x299, 1000 classes", source, "[1, 3, 299, 299]", notes)
    prev = None
    for n, out, k, s, p in [("conv1_3x3_s2", 32, 3, 2, 0), ("conv2_3x3_s1", 32, 3, 1, 0), ("conv3_3x3_s1", 64, 3, 1, 1)]:
        L.append(conv(n, out, k, s, p, inp=prev))
        L += bn_relu(n)
        prev = f"{n}_relu"
    for i, items in enumerate([STEM1, STEM2, STEM3], 1):
        prev = inception_block(L, f"inception_stem{i}", prev, items, CONCAT[f"stem{i}"], f"inception_stem{i}")
    for kind, count, items in [("a", 4, BLOCK_A), ("reduction_a", 1, REDUCTION_A), ("b", 7, BLOCK_B),
                               ("reduction_b", 1, REDUCTION_B), ("c", 3, BLOCK_C)]:
        for i in range(1, count + 1):
            n = f"inception_{kind}{i}" if count > 1 else kind
            prev = inception_block(L, n, prev, items, CONCAT[kind], f"{n}_concat")
    L += ["  - {name: pool_8x8_s1, op: global_avgpool}", "  - {name: flatten, op: flatten}",
          "  - {name: classifier, op: linear, out_features: 1000, bias: true}"]
    return L


def resnet_v2(name, blocks_per_stage, size, source, notes):
    """Pre-activation bottleneck ResNet (He et al., Identity Mappings, ECCV 2016) as in TF-Slim's resnet_v2:
    batchnorm and ReLU before each convolution, the stride on the 3x3 of the last block of a stage."""
    depth = 2 + 3 * sum(blocks_per_stage)
    L = header(name, f"ResNet-{depth} v2 at {size}x{size}, 1000 classes", source, f"[1, 3, {size}, {size}]", notes)
    L.append(conv("conv1", 64, 7, 2, 3))
    L.append("  - {name: maxpool, op: maxpool, kernel: 3, stride: 2, padding: 1}")
    prev = "maxpool"
    stages = list(zip(blocks_per_stage, [64, 128, 256, 512], [2, 2, 2, 1]))
    for stage, (blocks, width, stride) in enumerate(stages, 2):
        for b in range(blocks):
            n = f"s{stage}b{b}"
            s = stride if b == blocks - 1 else 1
            L.append(f"  - {{name: {n}_pre_bn, op: batchnorm, input: {prev}}}")
            L.append(f"  - {{name: {n}_pre_relu, op: relu}}")
            L.append(conv(f"{n}_c1", width, 1, 1, 0))
            L += bn_relu(f"{n}_c1")
            L.append(conv(f"{n}_c2", width, 3, s))
            L += bn_relu(f"{n}_c2")
            L.append(conv(f"{n}_c3", width * 4, 1, 1, 0))
            if b == 0:
                L.append(conv(f"{n}_short", width * 4, 1, s, 0, inp=f"{n}_pre_relu"))
                skip = f"{n}_short"
            elif s != 1:
                L.append(f"  - {{name: {n}_short, op: maxpool, input: {prev}, kernel: 1, stride: {s}}}")
                skip = f"{n}_short"
            else:
                skip = prev
            L.append(f"  - {{name: {n}_add, op: add, inputs: [{n}_c3, {skip}]}}")
            prev = f"{n}_add"
    L += ["  - {name: post_bn, op: batchnorm}", "  - {name: post_relu, op: relu}",
          "  - {name: pool, op: global_avgpool}", "  - {name: flatten, op: flatten}",
          "  - {name: fc, op: linear, out_features: 1000, bias: true}"]
    return L


def ssd_heads(L, maps, anchors, classes):
    """SSD's box predictors (TF object detection API, kernel_size 1): per feature map a 1x1 convolution to
    anchors x 4 box offsets and one to anchors x classes scores (the TFLite model's outputs before its CPU
    post-processing op), then the SSD extra layers' pattern: 1x1 to c/2, 3x3 stride 2 to c."""
    for i, (m, a) in enumerate(zip(maps, anchors)):
        L.append(conv(f"box{i}", a * 4, 1, 1, 0, inp=m))
        L.append(conv(f"cls{i}", a * classes, 1, 1, 0, inp=m))


def ssd_extras(L, prev):
    maps = []
    for i, c in enumerate([512, 256, 256, 128], 1):
        L.append(conv(f"extra{i}_1x1", c // 2, 1, 1, 0, inp=prev))
        L.append(f"  - {{name: extra{i}_1x1_relu6, op: relu6}}")
        L.append(conv(f"extra{i}_3x3", c, 3, 2))
        L.append(f"  - {{name: extra{i}_3x3_relu6, op: relu6}}")
        prev = f"extra{i}_3x3_relu6"
        maps.append(prev)
    return maps


def ssd_mobilenet_v1(source, notes):
    """SSD MobileNet v1 at 300x300 (TF object detection API ssd_mobilenet_v1_coco): MobileNet v1 to conv13,
    feature maps at conv11 (19x19x512) and conv13 (10x10x1024), four extra layers (5, 3, 2, 1), 3 anchors per
    cell on the first map and 6 on the others (1917 anchors), 91 classes (90 COCO + background)."""
    L = header("ssd_mobilenet_v1_300", "SSD MobileNet v1 at 300x300, COCO (91 classes), without post-processing",
               source, "[1, 3, 300, 300]", notes)
    L.append(conv("conv0", 32, 3, 2))
    L += bn_relu("conv0", "relu6")
    plan = [(64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2)] + [(512, 1)] * 5 + [(1024, 2), (1024, 1)]
    for i, (c, s) in enumerate(plan, 1):
        L.append(conv(f"dw{i}", None, 3, s, dw=True))
        L += bn_relu(f"dw{i}", "relu6")
        L.append(conv(f"pw{i}", c, 1))
        L += bn_relu(f"pw{i}", "relu6")
    maps = ["pw11_relu6", "pw13_relu6"] + ssd_extras(L, "pw13_relu6")
    ssd_heads(L, maps, [3, 6, 6, 6, 6, 6], 91)
    return L


def ssd_mobilenet_v2(source, notes):
    """SSD MobileNet v2 at 300x300 (TF object detection API ssd_mobilenet_v2_coco): MobileNet v2 (Sandler et al.
    2018, table 2) with feature maps at the expansion of block 13 (19x19x576) and the final 1x1 convolution
    (10x10x1280), then the extra layers and predictors of SSD MobileNet v1 (1917 anchors, 91 classes)."""
    L = header("ssd_mobilenet_v2_300", "SSD MobileNet v2 at 300x300, COCO (91 classes), without post-processing",
               source, "[1, 3, 300, 300]", notes)
    L.append(conv("stem", 32, 3, 2))
    L += bn_relu("stem", "relu6")
    prev, cin, block = "stem_relu6", 32, 0
    maps = []
    for t, c, n, s in [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2),
                       (6, 320, 1, 1)]:
        for r in range(n):
            b, stride = f"b{block}", (s if r == 0 else 1)
            x = prev
            if t != 1:
                L.append(conv(f"{b}_expand", cin * t, 1, 1, 0, inp=x))
                L += bn_relu(f"{b}_expand", "relu6")
                if block == 13:
                    maps.append(f"{b}_expand_relu6")
                L.append(conv(f"{b}_dw", None, 3, stride, dw=True))
            else:
                L.append(conv(f"{b}_dw", None, 3, stride, dw=True, inp=x))
            L += bn_relu(f"{b}_dw", "relu6")
            L.append(conv(f"{b}_project", c, 1, 1, 0))
            L.append(f"  - {{name: {b}_project_bn, op: batchnorm}}")
            prev = f"{b}_project_bn"
            if stride == 1 and cin == c:
                L.append(f"  - {{name: {b}_add, op: add, inputs: [{prev}, {x}]}}")
                prev = f"{b}_add"
            cin, block = c, block + 1
    L.append(conv("head", 1280, 1, 1, 0, inp=prev))
    L += bn_relu("head", "relu6")
    maps.append("head_relu6")
    maps += ssd_extras(L, "head_relu6")
    ssd_heads(L, maps, [3, 6, 6, 6, 6, 6], 91)
    return L


SSD_SOURCE = ("Liu et al., SSD: Single Shot MultiBox Detector, ECCV 2016; TF object detection API "
              "(github.com/tensorflow/models, research/object_detection) ")
MLPERF_TINY = "MLCommons tiny reference models (github.com/mlcommons/tiny, benchmark/training): "
FILES = {
    "mobilenet_v1_224.yaml": mobilenet_v1(
        "mobilenet_v1_224", 1.0, 224, 1000,
        "Howard et al., MobileNets, arXiv:1704.04861 (2017), table 1",
        ["MobileNet v1 1.0 at 224x224 (Howard et al. 2017, table 1): 4.2 M parameters, 569 M MACs.",
         "Written by make_networks.py."]),
    "mobilenet_v1_025_96_vww.yaml": mobilenet_v1(
        "mlperf_tiny_vww", 0.25, 96, 2, MLPERF_TINY + "visual wake words, MobileNet v1 0.25 at 96x96",
        ["MLPerf Tiny visual wake words: MobileNet v1 width 0.25 at 96x96x3, 2 classes (~7.5 M MACs).",
         "Written by make_networks.py."]),
    "resnet50_224.yaml": resnet50("resnet50_224", 224, "He et al., Deep Residual Learning, CVPR 2016, table 1",
                                  ["ResNet-50 v1 at 224x224 (He et al. 2016): 25.6 M parameters, 4.1 G MACs.",
                                   "Written by make_networks.py."]),
    "resnet101_224.yaml": resnet50("resnet101_224", 224, "He et al., Deep Residual Learning, CVPR 2016, table 1",
                                   ["ResNet-101 v1 at 224x224 (He et al. 2016): 44.5 M parameters, 7.8 G MACs.",
                                    "Written by make_networks.py."], (3, 4, 23, 3), 101),
    "resnet152_224.yaml": resnet50("resnet152_224", 224, "He et al., Deep Residual Learning, CVPR 2016, table 1",
                                   ["ResNet-152 v1 at 224x224 (He et al. 2016): 60.2 M parameters, 11.5 G MACs.",
                                    "Written by make_networks.py."], (3, 8, 36, 3), 152),
    "alexnet_227.yaml": alexnet("alexnet_227", "Krizhevsky et al., ImageNet Classification with Deep CNNs, NIPS "
                                "2012; layer shapes as in BVLC Caffe bvlc_alexnet deploy.prototxt",
                                ["AlexNet at 227x227, 1000 classes: the layer shapes of Caffe's bvlc_alexnet (as",
                                 "HaX-CoNN's prototxt_input_files/alexnet.prototxt); conv2/4/5 groups of 2 are",
                                 "written as dense convolutions (2x their MACs). Written by make_networks.py."]),
    "resnet50_299.yaml": resnet50("resnet50_299", 299, "He et al., Deep Residual Learning, CVPR 2016, table 1",
                                  ["ResNet-50 v1 at 299x299 (as in Coral's benchmark table).",
                                   "Written by make_networks.py."]),
    "mlperf_tiny_resnet8.yaml": resnet8(MLPERF_TINY + "image classification, ResNet-8 (CIFAR-10)",
                                        ["MLPerf Tiny image classification: ResNet-8, 32x32x3, 10 classes.",
                                         "Written by make_networks.py."]),
    "mlperf_tiny_ds_cnn.yaml": ds_cnn(MLPERF_TINY + "keyword spotting, DS-CNN",
                                      ["MLPerf Tiny keyword spotting: DS-CNN (Zhang et al., Hello Edge,",
                                       "arXiv:1711.07128), 49x10 MFCC input, 64 channels, 12 classes.",
                                       "Written by make_networks.py."]),
    "mlperf_tiny_fc_autoencoder.yaml": fc_autoencoder(MLPERF_TINY + "anomaly detection, FC autoencoder",
                                                      ["MLPerf Tiny anomaly detection: dense autoencoder 640-128x4-8-",
                                                       "128x4-640 (DCASE 2020 task 2 baseline).",
                                                       "Written by make_networks.py."]),
    "vgg16_224.yaml": vgg("vgg16_224", 16, "Simonyan and Zisserman, Very Deep Convolutional Networks, ICLR 2015, "
                          "table 1 (D)", ["VGG-16 at 224x224 (configuration D): 138 M parameters, 15.5 G MACs.",
                                          "Written by make_networks.py."]),
    "vgg19_224.yaml": vgg("vgg19_224", 19, "Simonyan and Zisserman, Very Deep Convolutional Networks, ICLR 2015, "
                          "table 1 (E)", ["VGG-19 at 224x224 (configuration E): 144 M parameters, 19.6 G MACs.",
                                          "Written by make_networks.py."]),
    "googlenet_224.yaml": googlenet(
        "googlenet_224", "Szegedy et al., Going Deeper with Convolutions, CVPR 2015, table 1; layer shapes as in BVLC "
        "Caffe bvlc_googlenet deploy.prototxt",
        ["GoogLeNet (Inception v1) at 224x224, 1000 classes: the layers of Caffe's bvlc_googlenet (as HaX-CoNN's",
         "prototxt_input_files/googlenet.prototxt), 7.0 M parameters, ~1.5 G MACs (the paper's budget); the two LRN",
         "layers are not modelled. Written by make_networks.py."]),
    "inception_v4_299.yaml": inception_v4(
        "inception_v4_299", "Szegedy et al., Inception-v4, Inception-ResNet and the Impact of Residual Connections on "
        "Learning, AAAI 2017, figures 3-9; layer order as in HaX-CoNN's prototxt_input_files/inception.prototxt",
        ["Inception-v4 at 299x299, 1000 classes (stem, 4 x Inception-A, Reduction-A, 7 x Inception-B, Reduction-B,",
         "3 x Inception-C): 42.7 M parameters, 12.3 G MACs. The layers in the order of the Caffe prototxt HaX-CoNN",
         "ran, so its TensorRT layer indices map to layers here. Written by make_networks.py."]),
    "resnet50_v2_299.yaml": resnet_v2("resnet50_v2_299", [3, 4, 6, 3], 299,
                                      "He et al., Identity Mappings in Deep Residual Networks, ECCV 2016 (TF-Slim "
                                      "resnet_v2_50)",
                                      ["ResNet-50 v2 (pre-activation) at 299x299, as in Coral's benchmark table.",
                                       "Written by make_networks.py."]),
    "resnet152_v2_299.yaml": resnet_v2("resnet152_v2_299", [3, 8, 36, 3], 299,
                                       "He et al., Identity Mappings in Deep Residual Networks, ECCV 2016 (TF-Slim "
                                       "resnet_v2_152)",
                                       ["ResNet-152 v2 (pre-activation) at 299x299, as in Coral's benchmark table:",
                                        "60 M parameters. Written by make_networks.py."]),
    "ssd_mobilenet_v1_300.yaml": ssd_mobilenet_v1(
        SSD_SOURCE + "ssd_mobilenet_v1_coco",
        ["SSD MobileNet v1 at 300x300 as in Coral's detection models (ssd_mobilenet_v1_coco_quant_postprocess):",
         "the network the Edge TPU runs; the TFLite_Detection_PostProcess op (box decoding, NMS) runs on the host",
         "CPU and is a stage of its own (tests/validation/applications/). Written by make_networks.py."]),
    "ssd_mobilenet_v2_300.yaml": ssd_mobilenet_v2(
        SSD_SOURCE + "ssd_mobilenet_v2_coco; Sandler et al., MobileNetV2, CVPR 2018",
        ["SSD MobileNet v2 at 300x300 as in Coral's detection models (ssd_mobilenet_v2_coco_quant_postprocess):",
         "the network the Edge TPU runs; the TFLite_Detection_PostProcess op (box decoding, NMS) runs on the host",
         "CPU and is a stage of its own (tests/validation/applications/). Written by make_networks.py."]),
}

if __name__ == "__main__":
    for name, lines in FILES.items():
        with open(name, "w") as f:
            f.write("\n".join(lines) + "\n")
