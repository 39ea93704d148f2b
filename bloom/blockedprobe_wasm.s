// The probes of a group of keys of a split-block filter in WebAssembly
// (blocked.go: block, masks, missing), without Go's br_table dispatch
// between keys.

#include "textflag.h"

// BIT pushes 1 << (uint32(x)·salt >> 27 + shift), x the low 32 bits of the
// digest R5.
#define BIT(salt, shift) \
	I64Const $1; \
	Get R5; \
	I32WrapI64; \
	I32Const $salt; \
	I32Mul; \
	I32Const $27; \
	I32ShrU; \
	I64ExtendI32U; \
	I64Const $shift; \
	I64Add; \
	I64Shl

// BLOCK sets R6 to the address of the block of digest R5,
// blocks + ((h >> 32)·n >> 32)·32, and R8 to R11 to the key's four masks,
// Parquet's eight bits paired into 64-bit words (blocked.go: masks).
#define BLOCK \
	Get R0; \
	Get R5; \
	I64Const $32; \
	I64ShrU; \
	Get R1; \
	I64Mul; \
	I64Const $32; \
	I64ShrU; \
	I64Const $5; \
	I64Shl; \
	I64Add; \
	Set R6; \
	BIT(1203114875, 0); \
	BIT(1150766481, 32); \
	I64Or; \
	Set R8; \
	BIT(-2010862245, 0); \
	BIT(-1565054819, 32); \
	I64Or; \
	Set R9; \
	BIT(1884591559, 0); \
	BIT(770785867, 32); \
	I64Or; \
	Set R10; \
	BIT(-1627633337, 0); \
	BIT(1550580529, 32); \
	I64Or; \
	Set R11

// LACKS pushes the bits of word off of the block at R6 that mask m lacks.
#define LACKS(m, off) \
	Get m; \
	I64Load off(R6); \
	I64Const $-1; \
	I64Xor; \
	I64And

// MISSING sets R7 to the bits of the masks R8 to R11 that the block at R6
// lacks (blocked.go: missing).
#define MISSING \
	LACKS(R8, 0); \
	LACKS(R9, 8); \
	I64Or; \
	LACKS(R10, 16); \
	I64Or; \
	LACKS(R11, 24); \
	I64Or; \
	Set R7

// SETS ORs mask m into word off of the block at R6.
#define SETS(m, off) \
	Get R6; \
	I32WrapI64; \
	Get m; \
	I64Load off(R6); \
	I64Or; \
	I64Store $off

// func blockedGroupAsm(blocks *[4]uint64, n uint64, hs *uint64, count int, add bool, out *byte) uint64
//
// blockedGroupAsm answers the count keys of digests hs in a split-block
// filter of n blocks: it reads every key's block first, without a branch,
// so that their cache misses overlap, then sets out[i] to 1 when key i is
// present (add false), or adds the keys in order and sets out[i] to 1 when
// key i was new (add true). It returns how many were new.
// Registers: R0 blocks, R1 n, R2 add, R3 the next digest, R4 its index, R5
// the digest, R6 its block, R7 the bits it lacks, R8 to R11 its masks, R12
// the keys present before the group, R13 out, R14 the count of new keys.
TEXT ·blockedGroupAsm(SB), NOSPLIT, $0-56
	I64Load blocks+0(FP)
	Set R0
	I64Load n+8(FP)
	Set R1
	I64Load8U add+32(FP)
	Set R2
	I64Load hs+16(FP)
	Set R3
	I64Const $0
	Set R4
	I64Const $0
	Set R12
	Block
		Loop
			Get R4
			I64Load count+24(FP)
			I64GeU
			BrIf $1
			I64Load 0(R3)
			Set R5
			BLOCK
			MISSING
			Get R12
			Get R7
			I64Eqz
			I64ExtendI32U
			Get R4
			I64Shl
			I64Or
			Set R12
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
	I64Load hs+16(FP)
	Set R3
	I64Load out+40(FP)
	Set R13
	I64Const $0
	Set R4
	I64Const $0
	Set R14
	Block
		Loop
			Get R4
			I64Load count+24(FP)
			I64GeU
			BrIf $1
			// R7: present before the group
			Get R12
			Get R4
			I64ShrU
			I64Const $1
			I64And
			Set R7
			Get R2
			I64Eqz
			I32Eqz
			If
				// Not new when present before the group; else new when its
				// block, as the keys before it in the group left it, lacks
				// a bit.
				Get R7
				I64Eqz
				If
					I64Load 0(R3)
					Set R5
					BLOCK
					MISSING
					Get R7
					I64Eqz
					I32Eqz
					If
						SETS(R8, 0)
						SETS(R9, 8)
						SETS(R10, 16)
						SETS(R11, 24)
						I64Const $1
						Set R7
					End
					Get R14
					Get R7
					I64Add
					Set R14
				Else
					I64Const $0
					Set R7
				End
			End
			Get R13
			I32WrapI64
			Get R7
			I64Store8 $0
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
	Get R14
	I64Store ret+48(FP)
	RET
