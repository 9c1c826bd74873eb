"""Bit operations of the compiled kernels: one machine instruction each (LLVM's ``ctpop``
and ``cttz``, and ``prefetch``), and the mirror of a board's bit mask.

The board's bit layout (square s of row r is bit ``s + (r + P_ROW_OFFSET) // 2``, see
:func:`damii_env._kernels.bit_layout`) puts the squares of a board of at most 10 x 10 in
one 64-bit word. Masks are int64 and never negative (the highest bit used is below 63).
"""

from __future__ import annotations

from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic


@intrinsic
def popcount(typingctx, x):
    """Number of set bits of an integer (``llvm.ctpop``)."""
    if not isinstance(x, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        [v] = args
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(v.type, [v.type]), f"llvm.ctpop.i{v.type.width}")
        return builder.call(fn, [v])

    return x(x), codegen


@intrinsic
def lowest_bit(typingctx, x):
    """Index of the lowest set bit of a non-zero integer (``llvm.cttz``)."""
    if not isinstance(x, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        [v] = args
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(v.type, [v.type, ir.IntType(1)]),
            f"llvm.cttz.i{v.type.width}")
        return builder.call(fn, [v, ir.Constant(ir.IntType(1), 0)])

    return x(x), codegen


@intrinsic
def prefetch_row(typingctx, array, index):
    """Ask the processor to bring row `index` of a 2-D C-contiguous array into the cache
    now (``llvm.prefetch``: a hint, never a fault), so that a read of it a few hundred
    cycles later does not wait for memory."""
    if not (isinstance(array, types.Array) and array.ndim == 2
            and isinstance(index, types.Integer)):
        return None

    def codegen(context, builder, signature, args):
        arrty = signature.args[0]
        arr = context.make_array(arrty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, arrty, arr,
                                       [args[1], context.get_constant(types.intp, 0)])
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]),
            "llvm.prefetch.p0i8")
        builder.call(fn, [builder.bitcast(ptr, i8p), i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return types.void(array, index), codegen


@njit(cache=True, inline="always")
def mirror(x, shift):
    """The mask x seen from the other side of the board: bit i goes to bit C - i, where
    ``shift = 63 - C`` (C: the sum of the first and the last square's bits). All in
    int64 with masks, so no step depends on the sign bit."""
    x = ((x >> 1) & 0x5555555555555555) | ((x & 0x5555555555555555) << 1)
    x = ((x >> 2) & 0x3333333333333333) | ((x & 0x3333333333333333) << 2)
    x = ((x >> 4) & 0x0F0F0F0F0F0F0F0F) | ((x & 0x0F0F0F0F0F0F0F0F) << 4)
    x = ((x >> 8) & 0x00FF00FF00FF00FF) | ((x & 0x00FF00FF00FF00FF) << 8)
    x = ((x >> 16) & 0x0000FFFF0000FFFF) | ((x & 0x0000FFFF0000FFFF) << 16)
    x = ((x >> 32) & 0xFFFFFFFF) | ((x & 0xFFFFFFFF) << 32)
    return (x >> shift) & ((1 << (64 - shift)) - 1)
