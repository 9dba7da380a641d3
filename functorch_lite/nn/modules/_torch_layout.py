"""torch.nn.modules' module layout over this package's: model code imports layers by torch's paths
(``from torch.nn.modules.batchnorm import _BatchNorm``, ``from torch.nn.modules.loss import CrossEntropyLoss``,
``isinstance(m, nn.modules.conv._ConvNd)``), while the classes here live in other files (layers.py, extra.py...).

``install()`` (run once, at the end of this package's ``__init__``, when every class is defined) gives each of
torch's submodule paths the names torch defines there: an existing module of that name gets the ones it lacks,
a missing one is made (an empty module registered under its dotted name, so ``import`` finds it). The classes
themselves stay where they are defined (their ``__module__`` and pickles unchanged)."""
from __future__ import annotations

import importlib
import sys
import types

# torch 2.13's classes per submodule of torch.nn.modules (those this package has)
LAYOUT = {
    "activation": "Threshold ReLU RReLU Hardtanh ReLU6 Sigmoid Hardsigmoid Tanh SiLU Mish Hardswish ELU CELU SELU GLU "
                  "GELU Hardshrink LeakyReLU LogSigmoid Softplus Softshrink MultiheadAttention PReLU Softsign "
                  "Tanhshrink Softmin Softmax Softmax2d LogSoftmax",
    "adaptive": "_ASMoutput AdaptiveLogSoftmaxWithLoss",
    "batchnorm": "_NormBase _BatchNorm _LazyNormBase BatchNorm1d LazyBatchNorm1d BatchNorm2d LazyBatchNorm2d "
                 "BatchNorm3d LazyBatchNorm3d SyncBatchNorm",
    "channelshuffle": "ChannelShuffle",
    "container": "Sequential ModuleList ModuleDict ParameterList ParameterDict",
    "conv": "_ConvNd Conv1d Conv2d Conv3d _ConvTransposeNd ConvTranspose1d ConvTranspose2d ConvTranspose3d "
            "_LazyConvXdMixin LazyConv1d LazyConv2d LazyConv3d LazyConvTranspose1d LazyConvTranspose2d "
            "LazyConvTranspose3d",
    "distance": "PairwiseDistance CosineSimilarity",
    "dropout": "_DropoutNd Dropout Dropout1d Dropout2d Dropout3d AlphaDropout FeatureAlphaDropout",
    "flatten": "Flatten Unflatten",
    "fold": "Fold Unfold",
    "instancenorm": "_InstanceNorm InstanceNorm1d LazyInstanceNorm1d InstanceNorm2d LazyInstanceNorm2d InstanceNorm3d "
                    "LazyInstanceNorm3d",
    "lazy": "LazyModuleMixin",
    "linear": "Identity Linear NonDynamicallyQuantizableLinear Bilinear LazyLinear",
    "loss": "_Loss _WeightedLoss L1Loss NLLLoss NLLLoss2d PoissonNLLLoss GaussianNLLLoss KLDivLoss MSELoss BCELoss "
            "BCEWithLogitsLoss HingeEmbeddingLoss MultiLabelMarginLoss SmoothL1Loss HuberLoss SoftMarginLoss "
            "CrossEntropyLoss MultiLabelSoftMarginLoss CosineEmbeddingLoss MarginRankingLoss MultiMarginLoss "
            "TripletMarginLoss TripletMarginWithDistanceLoss CTCLoss",
    "module": "_IncompatibleKeys Module",
    "normalization": "LocalResponseNorm CrossMapLRN2d LayerNorm GroupNorm RMSNorm",
    "padding": "CircularPad1d CircularPad2d CircularPad3d _ConstantPadNd ConstantPad1d ConstantPad2d ConstantPad3d "
               "ReflectionPad1d ReflectionPad2d ReflectionPad3d ReplicationPad1d ReplicationPad2d ReplicationPad3d "
               "ZeroPad1d ZeroPad2d ZeroPad3d",
    "pixelshuffle": "PixelShuffle PixelUnshuffle",
    "pooling": "_MaxPoolNd MaxPool1d MaxPool2d MaxPool3d _MaxUnpoolNd MaxUnpool1d MaxUnpool2d MaxUnpool3d AvgPool1d "
               "AvgPool2d AvgPool3d FractionalMaxPool2d FractionalMaxPool3d _LPPoolNd LPPool1d LPPool2d LPPool3d "
               "_AdaptiveMaxPoolNd AdaptiveMaxPool1d AdaptiveMaxPool2d AdaptiveMaxPool3d _AdaptiveAvgPoolNd "
               "AdaptiveAvgPool1d AdaptiveAvgPool2d AdaptiveAvgPool3d",
    "rnn": "RNNBase RNN LSTM GRU RNNCellBase RNNCell LSTMCell GRUCell",
    "sparse": "Embedding EmbeddingBag",
    "transformer": "Transformer TransformerEncoder TransformerDecoder TransformerEncoderLayer TransformerDecoderLayer",
    "upsampling": "Upsample UpsamplingNearest2d UpsamplingBilinear2d",
}

# where the classes are defined (a private base class is not in the package's star exports)
_DEFINED_IN = ("layers", "normalization", "conv", "extra", "pool_more", "lazy", "sampling", "attention", "adaptive",
               "activation", "loss", "container", "rnn", "transformer", "module")


def install(package: types.ModuleType) -> None:
    """Every ``LAYOUT`` path importable from ``package`` (functorch_lite.nn.modules) with torch's names."""
    homes = [package] + [importlib.import_module(f"{package.__name__}.{m}") for m in _DEFINED_IN]

    def find(name):
        for h in homes:
            obj = getattr(h, name, None)
            if obj is not None:
                return obj
        raise AttributeError(f"nn.modules layout: {name} is defined nowhere")  # (a stale LAYOUT entry)
    for sub, names in LAYOUT.items():
        full = f"{package.__name__}.{sub}"
        try:
            mod = importlib.import_module(full)
        except ModuleNotFoundError:
            mod = types.ModuleType(full, f"torch.nn.modules.{sub}'s classes (defined in other files here).")
            sys.modules[full] = mod
        setattr(package, sub, mod)
        for name in names.split():
            if not hasattr(mod, name):
                setattr(mod, name, find(name))
