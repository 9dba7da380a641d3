"""``torch.utils.data._utils.collate``: ``collate``, ``default_collate``, ``default_collate_fn_map`` (the same dict
``default_collate`` reads: a type registered there changes its behaviour), ``default_convert`` and the element
functions. The implementation is ``functorch_lite.utils.data.collate``."""
from ..collate import (collate, collate_float_fn, collate_int_fn, collate_numpy_array_fn,  # noqa: F401
                       collate_numpy_scalar_fn, collate_str_fn, collate_tensor_fn, default_collate,
                       default_collate_err_msg_format, default_collate_fn_map, default_convert,
                       np_str_obj_array_pattern)

__all__ = ["collate", "collate_float_fn", "collate_int_fn", "collate_numpy_array_fn", "collate_numpy_scalar_fn",
           "collate_str_fn", "collate_tensor_fn", "default_collate", "default_collate_err_msg_format",
           "default_collate_fn_map", "default_convert", "np_str_obj_array_pattern"]
