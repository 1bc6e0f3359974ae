//go:build !purego

#include "textflag.h"

// The scan kernels of kernels_amd64.go: SSE2 (every amd64 CPU has it),
// 128 bytes per iteration into eight accumulators, the loads folded into
// the adds, so that one core adds faster than memory delivers.

// func sumF64Blocks(xs []float64) float64
TEXT ·sumF64Blocks(SB), NOSPLIT, $0-32
	MOVQ xs_base+0(FP), SI
	MOVQ xs_len+8(FP), CX
	SHRQ $4, CX // 16 elements per iteration
	XORPD X0, X0
	XORPD X1, X1
	XORPD X2, X2
	XORPD X3, X3
	XORPD X4, X4
	XORPD X5, X5
	XORPD X6, X6
	XORPD X7, X7
	TESTQ CX, CX
	JZ f64done

f64loop:
	ADDPD 0(SI), X0
	ADDPD 16(SI), X1
	ADDPD 32(SI), X2
	ADDPD 48(SI), X3
	ADDPD 64(SI), X4
	ADDPD 80(SI), X5
	ADDPD 96(SI), X6
	ADDPD 112(SI), X7
	ADDQ  $128, SI
	DECQ  CX
	JNZ   f64loop

f64done:
	ADDPD    X1, X0
	ADDPD    X3, X2
	ADDPD    X5, X4
	ADDPD    X7, X6
	ADDPD    X2, X0
	ADDPD    X6, X4
	ADDPD    X4, X0
	MOVAPD   X0, X1
	UNPCKHPD X1, X1
	ADDSD    X1, X0
	MOVSD    X0, ret+24(FP)
	RET

// func sumF32Blocks(xs []float32) float64
TEXT ·sumF32Blocks(SB), NOSPLIT, $0-32
	MOVQ  xs_base+0(FP), SI
	MOVQ  xs_len+8(FP), CX
	SHRQ  $10, CX // blocks of 1024 elements: 32 iterations of 32
	XORPD X8, X8
	XORPD X9, X9
	TESTQ CX, CX
	JZ    f32done

f32block:
	XORPS X0, X0
	XORPS X1, X1
	XORPS X2, X2
	XORPS X3, X3
	XORPS X4, X4
	XORPS X5, X5
	XORPS X6, X6
	XORPS X7, X7
	MOVQ  $32, DX

f32loop:
	ADDPS 0(SI), X0
	ADDPS 16(SI), X1
	ADDPS 32(SI), X2
	ADDPS 48(SI), X3
	ADDPS 64(SI), X4
	ADDPS 80(SI), X5
	ADDPS 96(SI), X6
	ADDPS 112(SI), X7
	ADDQ  $128, SI
	DECQ  DX
	JNZ   f32loop

	// Fold the block's 32 float32 lanes into the float64 accumulators.
	ADDPS    X1, X0
	ADDPS    X3, X2
	ADDPS    X5, X4
	ADDPS    X7, X6
	ADDPS    X2, X0
	ADDPS    X6, X4
	ADDPS    X4, X0
	CVTPS2PD X0, X1
	MOVHLPS  X0, X0
	CVTPS2PD X0, X0
	ADDPD    X1, X8
	ADDPD    X0, X9
	DECQ     CX
	JNZ      f32block

f32done:
	ADDPD    X9, X8
	MOVAPD   X8, X1
	UNPCKHPD X1, X1
	ADDSD    X1, X8
	MOVSD    X8, ret+24(FP)
	RET
