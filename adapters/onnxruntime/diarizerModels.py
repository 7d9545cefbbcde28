# Builds the diarizer's two networks as ONNX graphs from their published PyTorch checkpoints,
# without PyTorch: the checkpoints are zip archives of a pickle plus raw tensor storages, read
# here with a restricted unpickler into numpy arrays; the graphs are written with the `onnx`
# package, layer by layer as the original modules compute them. Run once at provisioning
# (adapters/onnxruntime/provision.ts); onnxruntime runs the result.
#
# - pyannote segmentation-3.0 (PyanNet: SincNet, 4 bidirectional LSTM layers, 2 linear layers,
#   7 powerset classes over 3 local speakers with at most 2 at once), MIT licence.
# - CAM++ (3D-Speaker's speech_campplus_sv_zh_en_16k-common_advanced: FCM head, dense TDNN
#   blocks with context-aware masking, statistics pooling, a 512-d embedding), Apache 2.0.
#   The graph's output is the model's embedding (the last batch norm, as 3D-Speaker defines it).
#
#   python3 diarizerModels.py <segmentation .bin> <campplus .pt> <out dir>
import io
import pickle
import sys
import zipfile
from collections import OrderedDict

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 18

# ---- checkpoints without torch ------------------------------------------------------------------

_DTYPES = {"FloatStorage": np.float32, "LongStorage": np.int64, "IntStorage": np.int32, "HalfStorage": np.float16, "DoubleStorage": np.float64}


class _Anything:
    """Stands for any class the pickle names that is not a tensor (pyannote's task specs, enums)."""

    def __init__(self, *args, **kwargs):
        self.args = args

    def __setstate__(self, state):
        self.state = state


class _Storage:
    def __init__(self, name):
        self.dtype = _DTYPES[name]


def _rebuild_tensor(storage, offset, size, stride, *_rest):
    if len(size) == 0:
        return storage[offset].copy()
    item = storage.itemsize
    return np.lib.stride_tricks.as_strided(storage[offset:], shape=tuple(size), strides=tuple(s * item for s in stride)).copy()


def load_checkpoint(path):
    """The state dict of a zip-format torch.save file, as numpy arrays by name."""
    archive = zipfile.ZipFile(path)
    pkl = next(n for n in archive.namelist() if n.endswith("/data.pkl"))
    prefix = pkl[: -len("data.pkl")]

    class Unpickler(pickle.Unpickler):
        def find_class(self, module, name):
            if module == "torch._utils" and name == "_rebuild_tensor_v2":
                return _rebuild_tensor
            if module == "torch" and name in _DTYPES:
                return _Storage(name)
            if module == "collections" and name == "OrderedDict":
                return OrderedDict
            # Nothing else is ever called: no code from the file runs here.
            return _Anything

        def persistent_load(self, pid):
            _kind, storage, key, _location, _numel = pid
            return np.frombuffer(archive.read(f"{prefix}data/{key}"), dtype=storage.dtype)

    obj = Unpickler(io.BytesIO(archive.read(pkl))).load()
    if isinstance(obj, dict) and "state_dict" in obj:
        obj = obj["state_dict"]
    return {k: v for k, v in obj.items() if isinstance(v, np.ndarray)}


# ---- graph building ------------------------------------------------------------------------------


class Graph:
    def __init__(self, weights):
        self.w = weights
        self.nodes = []
        self.inits = []
        self.n = 0

    def name(self, hint):
        self.n += 1
        return f"{hint}_{self.n}"

    def const(self, value, hint="c"):
        name = self.name(hint)
        self.inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def weight(self, key, transform=None):
        v = self.w[key].astype(np.float32)
        return self.const(transform(v) if transform else v, key.replace(".", "_"))

    def op(self, kind, inputs, **attrs):
        out = self.name(kind.lower())
        self.nodes.append(helper.make_node(kind, inputs, [out], **attrs))
        return out

    def ops(self, kind, inputs, outputs, **attrs):
        names = [self.name(f"{kind.lower()}_{o}") for o in outputs]
        self.nodes.append(helper.make_node(kind, inputs, names, **attrs))
        return names

    def model(self, inputs, output, output_shape):
        graph = helper.make_graph(self.nodes, "g", inputs, [helper.make_tensor_value_info(output, TensorProto.FLOAT, output_shape)], self.inits)
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="notes-service diarizerModels.py")
        onnx.checker.check_model(m)
        return m


# ---- pyannote segmentation-3.0 -------------------------------------------------------------------


def sinc_filters(w, prefix="sincnet.conv1d.0.filterbank.", sample_rate=16000, min_low_hz=50, min_band_hz=50):
    """asteroid-filterbanks' ParamSincFB filters (80 x 1 x 251) from the learned band edges."""
    low = min_low_hz + np.abs(w[prefix + "low_hz_"].astype(np.float64))
    high = np.clip(low + min_band_hz + np.abs(w[prefix + "band_hz_"].astype(np.float64)), min_low_hz, sample_rate / 2)
    n_ = w[prefix + "n_"].astype(np.float64)
    window = w[prefix + "window_"].astype(np.float64)
    band = (high - low)[:, 0]
    ft_low = low @ n_
    ft_high = high @ n_
    cos_left = ((np.sin(ft_high) - np.sin(ft_low)) / (n_ / 2)) * window
    cos = np.concatenate([cos_left, 2 * band[:, None], cos_left[:, ::-1]], axis=1)
    sin_left = ((np.cos(ft_low) - np.cos(ft_high)) / (n_ / 2)) * window
    sin = np.concatenate([sin_left, np.zeros_like(band[:, None]), -sin_left[:, ::-1]], axis=1)
    filters = np.concatenate([cos / (2 * band[:, None]), sin / (2 * band[:, None])], axis=0)
    return filters[:, None, :].astype(np.float32)


def _lstm_gates(m, hidden):
    # PyTorch stacks the gates i, f, g, o; ONNX wants i, o, f, c.
    i, f, g, o = np.split(m, 4, axis=0)
    return np.concatenate([i, o, f, g], axis=0)


def segmentation_graph(w):
    g = Graph(w)
    x = "waveform"
    x = g.op("InstanceNormalization", [x, g.weight("sincnet.wav_norm1d.weight"), g.weight("sincnet.wav_norm1d.bias")], epsilon=1e-5)
    x = g.op("Conv", [x, g.const(sinc_filters(w), "sinc")], strides=[10])
    x = g.op("Abs", [x])
    for i in range(3):
        if i > 0:
            x = g.op("Conv", [x, g.weight(f"sincnet.conv1d.{i}.weight"), g.weight(f"sincnet.conv1d.{i}.bias")])
        x = g.op("MaxPool", [x], kernel_shape=[3], strides=[3])
        x = g.op("InstanceNormalization", [x, g.weight(f"sincnet.norm1d.{i}.weight"), g.weight(f"sincnet.norm1d.{i}.bias")], epsilon=1e-5)
        x = g.op("LeakyRelu", [x], alpha=0.01)
    x = g.op("Transpose", [x], perm=[2, 0, 1])  # frames, batch, features
    hidden = w["lstm.weight_hh_l0"].shape[1]
    layer = 0
    while f"lstm.weight_ih_l{layer}" in w:
        W = np.stack([_lstm_gates(w[f"lstm.weight_ih_l{layer}{s}"], hidden) for s in ("", "_reverse")])
        R = np.stack([_lstm_gates(w[f"lstm.weight_hh_l{layer}{s}"], hidden) for s in ("", "_reverse")])
        B = np.stack([np.concatenate([_lstm_gates(w[f"lstm.bias_ih_l{layer}{s}"], hidden), _lstm_gates(w[f"lstm.bias_hh_l{layer}{s}"], hidden)]) for s in ("", "_reverse")])
        y, _h, _c = g.ops("LSTM", [x, g.const(W.astype(np.float32), "W"), g.const(R.astype(np.float32), "R"), g.const(B.astype(np.float32), "B")], ["y", "h", "c"], hidden_size=hidden, direction="bidirectional")
        y = g.op("Transpose", [y], perm=[0, 2, 1, 3])  # frames, batch, direction, hidden
        x = g.op("Reshape", [y, g.const(np.array([0, 0, -1], dtype=np.int64), "shape")])
        layer += 1
    x = g.op("Transpose", [x], perm=[1, 0, 2])  # batch, frames, features
    i = 0
    while f"linear.{i}.weight" in w:
        x = g.op("Add", [g.op("MatMul", [x, g.weight(f"linear.{i}.weight", lambda m: m.T.copy())]), g.weight(f"linear.{i}.bias")])
        x = g.op("LeakyRelu", [x], alpha=0.01)
        i += 1
    x = g.op("Add", [g.op("MatMul", [x, g.weight("classifier.weight", lambda m: m.T.copy())]), g.weight("classifier.bias")])
    x = g.op("LogSoftmax", [x], axis=-1)
    classes = w["classifier.weight"].shape[0]
    return g.model([helper.make_tensor_value_info("waveform", TensorProto.FLOAT, ["batch", 1, "samples"])], x, ["batch", "frames", classes])


# ---- CAM++ ---------------------------------------------------------------------------------------


def _bn(g, x, prefix, affine=True):
    channels = g.w[prefix + ".running_mean"].shape[0]
    scale = g.weight(prefix + ".weight") if affine else g.const(np.ones(channels, np.float32), "ones")
    bias = g.weight(prefix + ".bias") if affine else g.const(np.zeros(channels, np.float32), "zeros")
    return g.op("BatchNormalization", [x, scale, bias, g.weight(prefix + ".running_mean"), g.weight(prefix + ".running_var")], epsilon=1e-5)


def _conv(g, x, key, bias_key=None, **attrs):
    inputs = [x, g.weight(key)] + ([g.weight(bias_key)] if bias_key else [])
    return g.op("Conv", inputs, **attrs)


def _res_block(g, x, p, stride):
    out = g.op("Relu", [_bn(g, _conv(g, x, p + ".conv1.weight", strides=[stride, 1], pads=[1, 1, 1, 1]), p + ".bn1")])
    out = _bn(g, _conv(g, out, p + ".conv2.weight", pads=[1, 1, 1, 1]), p + ".bn2")
    short = _bn(g, _conv(g, x, p + ".shortcut.0.weight", strides=[stride, 1]), p + ".shortcut.1") if p + ".shortcut.0.weight" in g.w else x
    return g.op("Relu", [g.op("Add", [out, short])])


def _cam_layer(g, x, p, dilation):
    y = _conv(g, x, p + ".linear_local.weight", pads=[dilation, dilation], dilations=[dilation])
    # Context: the whole input's mean plus the mean of its 100-frame segment.
    frames = g.op("Gather", [g.op("Shape", [x]), g.const(np.array([2], dtype=np.int64), "idx")], axis=0)
    mean = g.op("ReduceMean", [x, g.const(np.array([2], dtype=np.int64), "axes")], keepdims=1)
    seg = g.op("AveragePool", [x], kernel_shape=[100], strides=[100], ceil_mode=1)
    seg = g.op("Unsqueeze", [seg, g.const(np.array([3], dtype=np.int64), "axes")])
    shape4 = g.op("Concat", [g.op("Shape", [seg], end=3), g.const(np.array([100], dtype=np.int64), "k")], axis=0)
    seg = g.op("Expand", [seg, shape4])
    seg = g.op("Reshape", [seg, g.const(np.array([0, 0, -1], dtype=np.int64), "shape")])
    seg = g.op("Slice", [seg, g.const(np.array([0], dtype=np.int64), "start"), frames, g.const(np.array([2], dtype=np.int64), "axes")])
    context = g.op("Add", [mean, seg])
    gate = g.op("Relu", [_conv(g, context, p + ".linear1.weight", p + ".linear1.bias")])
    gate = g.op("Sigmoid", [_conv(g, gate, p + ".linear2.weight", p + ".linear2.bias")])
    return g.op("Mul", [y, gate])


def campplus_graph(w):
    g = Graph(w)
    x = g.op("Transpose", ["fbank"], perm=[0, 2, 1])  # batch, mel bins, frames
    x = g.op("Unsqueeze", [x, g.const(np.array([1], dtype=np.int64), "axes")])
    x = g.op("Relu", [_bn(g, _conv(g, x, "head.conv1.weight", pads=[1, 1, 1, 1]), "head.bn1")])
    for layer in ("layer1", "layer2"):
        x = _res_block(g, x, f"head.{layer}.0", 2)
        x = _res_block(g, x, f"head.{layer}.1", 1)
    x = g.op("Relu", [_bn(g, _conv(g, x, "head.conv2.weight", strides=[2, 1], pads=[1, 1, 1, 1]), "head.bn2")])
    channels = w["head.conv2.weight"].shape[0] * 80 // 8  # the head halves the 80 mel bins three times
    x = g.op("Reshape", [x, g.const(np.array([0, channels, -1], dtype=np.int64), "shape")])  # batch, channels x bins, frames
    x = g.op("Relu", [_bn(g, _conv(g, x, "xvector.tdnn.linear.weight", strides=[2], pads=[2, 2]), "xvector.tdnn.nonlinear.batchnorm")])
    for b, dilation in ((1, 1), (2, 2), (3, 2)):
        layer = 1
        while f"xvector.block{b}.tdnnd{layer}.linear1.weight" in w:
            p = f"xvector.block{b}.tdnnd{layer}"
            h = g.op("Relu", [_bn(g, x, p + ".nonlinear1.batchnorm")])
            h = _conv(g, h, p + ".linear1.weight")
            h = g.op("Relu", [_bn(g, h, p + ".nonlinear2.batchnorm")])
            x = g.op("Concat", [x, _cam_layer(g, h, p + ".cam_layer", dilation)], axis=1)
            layer += 1
        t = f"xvector.transit{b}"
        x = _conv(g, g.op("Relu", [_bn(g, x, t + ".nonlinear.batchnorm")]), t + ".linear.weight")
    x = g.op("Relu", [_bn(g, x, "xvector.out_nonlinear.batchnorm")])
    # Statistics pooling: mean and unbiased standard deviation over the frames.
    axes = g.const(np.array([2], dtype=np.int64), "axes")
    mean = g.op("ReduceMean", [x, axes], keepdims=1)
    diff = g.op("Sub", [x, mean])
    frames = g.op("Cast", [g.op("Gather", [g.op("Shape", [x]), g.const(np.array([2], dtype=np.int64), "idx")], axis=0)], to=TensorProto.FLOAT)
    var = g.op("Div", [g.op("ReduceSum", [g.op("Mul", [diff, diff]), axes], keepdims=1), g.op("Sub", [frames, g.const(np.array([1.0], np.float32), "one")])])
    stats = g.op("Concat", [mean, g.op("Sqrt", [var])], axis=1)  # batch, 2 x channels, 1
    x = _bn(g, _conv(g, stats, "xvector.dense.linear.weight"), "xvector.dense.nonlinear.batchnorm", affine=False)
    x = g.op("Squeeze", [x, axes])
    return g.model([helper.make_tensor_value_info("fbank", TensorProto.FLOAT, ["batch", "frames", 80])], x, ["batch", w["xvector.dense.linear.weight"].shape[0]])


def main():
    seg_path, emb_path, out_dir = sys.argv[1:4]
    onnx.save(segmentation_graph(load_checkpoint(seg_path)), f"{out_dir}/segmentation-3.0.onnx")
    onnx.save(campplus_graph(load_checkpoint(emb_path)), f"{out_dir}/campplus.onnx")


if __name__ == "__main__":
    main()
