// The probes of a group of keys of a classic filter in WebAssembly: the
// positions of each key by enhanced double hashing (hash.go: start and
// step), every word read, without Go's br_table dispatch between the steps
// of a key (one taken branch a position in compiled Go).

#include "textflag.h"

// MULHI pushes the upper 64 bits of the 128-bit product of a and b, from
// 32-bit halves (wasm has no wider multiply); it uses R11 to R14.
#define MULHI(a, b) \
	Get a; \
	I64Const $0xffffffff; \
	I64And; \
	Get b; \
	I64Const $0xffffffff; \
	I64And; \
	I64Mul; \
	I64Const $32; \
	I64ShrU; \
	Get a; \
	I64Const $0xffffffff; \
	I64And; \
	Get b; \
	I64Const $32; \
	I64ShrU; \
	I64Mul; \
	Tee R11; \
	I64Const $0xffffffff; \
	I64And; \
	I64Add; \
	Get a; \
	I64Const $32; \
	I64ShrU; \
	Get b; \
	I64Const $0xffffffff; \
	I64And; \
	I64Mul; \
	Tee R12; \
	I64Const $0xffffffff; \
	I64And; \
	I64Add; \
	I64Const $32; \
	I64ShrU; \
	Get a; \
	I64Const $32; \
	I64ShrU; \
	Get b; \
	I64Const $32; \
	I64ShrU; \
	I64Mul; \
	I64Add; \
	Get R11; \
	I64Const $32; \
	I64ShrU; \
	I64Add; \
	Get R12; \
	I64Const $32; \
	I64ShrU; \
	I64Add

// func presentAsm(words *uint64, m uint64, k uint64, hs *uint64, n int) uint64
//
// presentAsm returns the mask of the n digests at hs whose k positions in
// the m bits at words are all set, as Filter.present does. m ≥ 1, k ≥ 1.
// Registers: R0 words, R1 m, R2 k, R3 the next digest, R4 its index, R5
// the digest, then mix64 of it, R6 x, R7 y, R8 the position's number j,
// R9 whether all bits so far are set, R10 the mask.
TEXT ·presentAsm(SB), NOSPLIT, $0-48
	I64Load words+0(FP)
	Set R0
	I64Load m+8(FP)
	Set R1
	I64Load k+16(FP)
	Set R2
	I64Load hs+24(FP)
	Set R3
	I64Const $0
	Set R4
	I64Const $0
	Set R10
	Block
		Loop
			Get R4
			I64Load n+32(FP)
			I64GeU
			BrIf $1
			I64Load 0(R3)
			Set R5
			// x = h·m >> 64
			MULHI(R5, R1)
			Set R6
			// y = mix64(h)·m >> 64
			Get R5
			Get R5
			I64Const $30
			I64ShrU
			I64Xor
			I64Const $-4658895280553007687
			I64Mul
			Tee R5
			Get R5
			I64Const $27
			I64ShrU
			I64Xor
			I64Const $-7723592293110705685
			I64Mul
			Tee R5
			Get R5
			I64Const $31
			I64ShrU
			I64Xor
			Set R5
			MULHI(R5, R1)
			Set R7
			I64Const $1
			Set R9
			I64Const $1
			Set R8
			Loop
				// all &= words[x / 64] >> (x % 64): wasm shifts by the
				// count mod 64.
				Get R9
				Get R0
				Get R6
				I64Const $6
				I64ShrU
				I64Const $3
				I64Shl
				I64Add
				I32WrapI64
				I64Load $0
				Get R6
				I64ShrU
				I64And
				Set R9
				Get R8
				Get R2
				I64LtU
				If
					// x = (x + y) mod m, y = y + j (mod m, rarely needed)
					Get R6
					Get R7
					I64Add
					Tee R6
					Get R1
					I64Sub
					Get R6
					Get R6
					Get R1
					I64GeU
					Select
					Set R6
					Get R7
					Get R8
					I64Add
					Tee R7
					Get R1
					I64GeU
					If
						Get R7
						Get R1
						I64RemU
						Set R7
					End
					Get R8
					I64Const $1
					I64Add
					Set R8
					Br $1
				End
			End
			Get R10
			Get R9
			I64Const $1
			I64And
			Get R4
			I64Shl
			I64Or
			Set R10
			Get R3
			I64Const $8
			I64Add
			Set R3
			Get R4
			I64Const $1
			I64Add
			Set R4
			Br $0
		End
	End
	Get SP
	Get R10
	I64Store ret+40(FP)
	RET
