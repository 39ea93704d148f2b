// The probes of a group of keys of a classic filter in WebAssembly: the
// positions of each key by enhanced double hashing (hash.go: start and
// step), every word read, without Go's br_table dispatch between the steps
// of a key (one taken branch a position in compiled Go).

#include "textflag.h"

// MULHI pushes the upper 64 bits of the 128-bit product of a and b, from
// 32-bit halves (wasm has no wider multiply); it uses R11 and R12.
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

// START sets x (R6) and y (R7), the first position of the key with digest
// R5 and the walk's first step (hash.go's start); R5 becomes mix64 of it.
#define START \
	MULHI(R5, R1); \
	Set R6; \
	Get R5; \
	Get R5; \
	I64Const $30; \
	I64ShrU; \
	I64Xor; \
	I64Const $-4658895280553007687; \
	I64Mul; \
	Tee R5; \
	Get R5; \
	I64Const $27; \
	I64ShrU; \
	I64Xor; \
	I64Const $-7723592293110705685; \
	I64Mul; \
	Tee R5; \
	Get R5; \
	I64Const $31; \
	I64ShrU; \
	I64Xor; \
	Set R5; \
	MULHI(R5, R1); \
	Set R7

// STEP moves x (R6) past position j (R8) to the next (hash.go's step):
// x = (x + y) mod m with a select, y = y + j, reduced mod m in the rare
// case it reaches m, and j = j + 1.
#define STEP \
	Get R6; \
	Get R7; \
	I64Add; \
	Tee R6; \
	Get R1; \
	I64Sub; \
	Get R6; \
	Get R6; \
	Get R1; \
	I64GeU; \
	Select; \
	Set R6; \
	Get R7; \
	Get R8; \
	I64Add; \
	Tee R7; \
	Get R1; \
	I64GeU; \
	If; \
		Get R7; \
		Get R1; \
		I64RemU; \
		Set R7; \
	End; \
	Get R8; \
	I64Const $1; \
	I64Add; \
	Set R8

// WORD pushes the address of the word that holds bit x (R6).
#define WORD \
	Get R0; \
	Get R6; \
	I64Const $6; \
	I64ShrU; \
	I64Const $3; \
	I64Shl; \
	I64Add; \
	I32WrapI64

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
			START
			I64Const $1
			Set R9
			I64Const $1
			Set R8
			Loop
				// all &= words[x / 64] >> (x % 64): wasm shifts by the
				// count mod 64.
				Get R9
				WORD
				I64Load $0
				Get R6
				I64ShrU
				I64And
				Set R9
				Get R8
				Get R2
				I64LtU
				If
					STEP
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

// func addGroupAsm(words *uint64, m uint64, k uint64, hs *uint64, n int, present uint64, out *byte) uint64
//
// addGroupAsm adds the n keys of digests hs in order, as Filter.add does,
// sets out[i] to 1 when key i was new, else 0, and returns how many were.
// A key whose bit is set in present (all its bits were set before the
// group) is not new and writes nothing. m ≥ 1, k ≥ 1.
// Registers: as presentAsm, with R9 whether the key is new, R10 the count,
// R13 out, R14 present, R15 a word's address.
TEXT ·addGroupAsm(SB), NOSPLIT, $0-64
	I64Load words+0(FP)
	Set R0
	I64Load m+8(FP)
	Set R1
	I64Load k+16(FP)
	Set R2
	I64Load hs+24(FP)
	Set R3
	I64Load present+40(FP)
	Set R14
	I64Load out+48(FP)
	Set R13
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
			I64Const $0
			Set R9
			Get R14
			Get R4
			I64ShrU
			I64Const $1
			I64And
			I64Eqz
			If
				I64Load 0(R3)
				Set R5
				START
				I64Const $1
				Set R8
				Loop
					// new |= ^word >> x & 1; word |= 1 << x
					WORD
					I64ExtendI32U
					Tee R15
					I32WrapI64
					I64Load $0
					Set R11
					Get R9
					Get R11
					I64Const $-1
					I64Xor
					Get R6
					I64ShrU
					I64Const $1
					I64And
					I64Or
					Set R9
					Get R15
					I32WrapI64
					Get R11
					I64Const $1
					Get R6
					I64Shl
					I64Or
					I64Store $0
					Get R8
					Get R2
					I64LtU
					If
						STEP
						Br $1
					End
				End
			End
			Get R13
			I32WrapI64
			Get R9
			I64Store8 $0
			Get R10
			Get R9
			I64Add
			Set R10
			Get R13
			I64Const $1
			I64Add
			Set R13
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
	I64Store ret+56(FP)
	RET
