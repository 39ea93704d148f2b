// XXH64 in WebAssembly, equal to github.com/cespare/xxhash/v2 (the tests in
// xxh64asm_wasm_test.go compare them). Go's wasm backend turns every taken
// branch of compiled Go into a jump through the function's br_table dispatch
// loop; here the loops are wasm's own structured Loop ... BrIf ... End, and
// the arithmetic stays in locals, as Go's internal/bytealg does for its wasm
// hot paths.
//
// One key's XXH64 is a chain of multiplications, each waiting for the one
// before, so the processor has little to do in parallel within a key:
// hashGroupAsm hashes two keys at a time, their steps interleaved, so that
// each fills the other's waits. The bytes after a key's last 32-byte stripe
// (fewer than 32) take a fixed sequence of steps without a branch (see
// TAIL8): which steps apply depends on the key's length, which a branch
// predictor cannot guess from one key to the next, and a wrong guess throws
// away the work started on the other key too.

#include "textflag.h"

// XXH64's primes, as signed 64-bit immediates.
#define PRIME1 $-7046029288634856825
#define PRIME2 $-4417276706812531889
#define PRIME3 $1609587929392839161
#define PRIME4 $-8796714831421723037
#define PRIME5 $2870177450012600261
// PRIME1 + PRIME2 (mod 2^64): the first lane's start, less the seed.
#define PRIME12 $6983438078262162902

// Registers: R4 to R7 are the four lanes of the key being striped, R8 a
// temporary, R9 the seed and then the last stripe's address. hashGroupAsm
// keeps key A in R0 (address), R1 (end), R2 (hash), key B in R3, R13, R15,
// the next key's address in R10, the lengths in R11, the keys left in R12
// and the digests in R14.

// LANE mixes the 8 bytes at off(p) into lane v:
// v = rotl(v + word·PRIME2, 31)·PRIME1.
#define LANE(p, v, off) \
	Get v; \
	I64Load off(p); \
	I64Const PRIME2; \
	I64Mul; \
	I64Add; \
	I64Const $31; \
	I64Rotl; \
	I64Const PRIME1; \
	I64Mul; \
	Set v

// MERGE folds lane v into h: h = (h ^ round(0, v))·PRIME1 + PRIME4.
#define MERGE(h, v) \
	Get h; \
	Get v; \
	I64Const PRIME2; \
	I64Mul; \
	I64Const $31; \
	I64Rotl; \
	I64Const PRIME1; \
	I64Mul; \
	I64Xor; \
	I64Const PRIME1; \
	I64Mul; \
	I64Const PRIME4; \
	I64Add; \
	Set h

// STRIPES starts the XXH64 under the seed R9 of the key at p whose length
// is in end and at lsoff(R11): end becomes the key's end, h the hash of its
// 32-byte stripes and its length, p the address after the stripes.
#define STRIPES(p, end, h, lsoff) \
	Get p; \
	Get end; \
	I64Add; \
	Set end; \
	I64Load32U lsoff(R11); \
	I64Const $32; \
	I64GeU; \
	If; \
		Get R9; \
		I64Const PRIME12; \
		I64Add; \
		Set R4; \
		Get R9; \
		I64Const PRIME2; \
		I64Add; \
		Set R5; \
		Get R9; \
		Set R6; \
		Get R9; \
		I64Const PRIME1; \
		I64Sub; \
		Set R7; \
		Get end; \
		I64Const $32; \
		I64Sub; \
		Set R9; \
		Loop; \
			LANE(p, R4, 0); \
			LANE(p, R5, 8); \
			LANE(p, R6, 16); \
			LANE(p, R7, 24); \
			Get p; \
			I64Const $32; \
			I64Add; \
			Tee p; \
			Get R9; \
			I64LeU; \
			BrIf $0; \
		End; \
		Get R4; \
		I64Const $1; \
		I64Rotl; \
		Get R5; \
		I64Const $7; \
		I64Rotl; \
		I64Add; \
		Get R6; \
		I64Const $12; \
		I64Rotl; \
		I64Add; \
		Get R7; \
		I64Const $18; \
		I64Rotl; \
		I64Add; \
		Set h; \
		MERGE(h, R4); \
		MERGE(h, R5); \
		MERGE(h, R6); \
		MERGE(h, R7); \
	Else; \
		Get R9; \
		I64Const PRIME5; \
		I64Add; \
		Set h; \
	End; \
	Get h; \
	I64Load32U lsoff(R11); \
	I64Add; \
	Set h

// TAIL8 mixes the next 8 bytes at p into h, and moves p past them, when at
// least 8 are left before end; else it changes nothing. A select takes the
// place of a branch; a step that does not apply loads from R14, an address
// valid for 8 bytes, so that no load passes the key's end.
#define TAIL8(p, end, h) \
	STEP(p, end, 8); \
	I64Load $0; \
	I64Const PRIME2; \
	I64Mul; \
	I64Const $31; \
	I64Rotl; \
	I64Const PRIME1; \
	I64Mul; \
	Get h; \
	I64Xor; \
	I64Const $27; \
	I64Rotl; \
	I64Const PRIME1; \
	I64Mul; \
	I64Const PRIME4; \
	I64Add; \
	KEEP(p, h, 3)

// TAIL4 is TAIL8 for XXH64's step of 4 bytes.
#define TAIL4(p, end, h) \
	STEP(p, end, 4); \
	I64Load32U $0; \
	I64Const PRIME1; \
	I64Mul; \
	Get h; \
	I64Xor; \
	I64Const $23; \
	I64Rotl; \
	I64Const PRIME2; \
	I64Mul; \
	I64Const PRIME3; \
	I64Add; \
	KEEP(p, h, 2)

// TAIL1 is TAIL8 for XXH64's step of 1 byte.
#define TAIL1(p, end, h) \
	STEP(p, end, 1); \
	I64Load8U $0; \
	I64Const PRIME5; \
	I64Mul; \
	Get h; \
	I64Xor; \
	I64Const $11; \
	I64Rotl; \
	I64Const PRIME1; \
	I64Mul; \
	KEEP(p, h, 0)

// STEP sets R8 to 1 when n bytes are left from p to end, else 0, and
// pushes the address a tail step reads: p, or R14 when the step does not
// apply.
#define STEP(p, end, n) \
	Get p; \
	I64Const $n; \
	I64Add; \
	Get end; \
	I64LeU; \
	I64ExtendI32U; \
	Set R8; \
	Get p; \
	Get R14; \
	Get R8; \
	I32WrapI64; \
	Select; \
	I32WrapI64

// KEEP takes the new h a tail step pushed when the step applies (R8 is 1)
// and then moves p on by 1 << shift bytes; else it leaves h and p as they
// were.
#define KEEP(p, h, shift) \
	Get h; \
	Get R8; \
	I32WrapI64; \
	Select; \
	Set h; \
	Get p; \
	Get R8; \
	I64Const $shift; \
	I64Shl; \
	I64Add; \
	Set p

// AVALANCHE is XXH64's final mix of h.
#define AVALANCHE(h) \
	Get h; \
	Get h; \
	I64Const $33; \
	I64ShrU; \
	I64Xor; \
	I64Const PRIME2; \
	I64Mul; \
	Tee h; \
	Get h; \
	I64Const $29; \
	I64ShrU; \
	I64Xor; \
	I64Const PRIME3; \
	I64Mul; \
	Tee h; \
	Get h; \
	I64Const $32; \
	I64ShrU; \
	I64Xor; \
	Set h

// NEXT sets R10 to where the key after the one that ends at end starts:
// stride bytes after R10 when stride is not 0, else end.
#define NEXT(end) \
	Get R10; \
	I64Load stride+24(FP); \
	I64Add; \
	Get end; \
	I64Load stride+24(FP); \
	I64Eqz; \
	I32Eqz; \
	Select; \
	Set R10

// func hashGroupAsm(p *byte, ls *uint32, count int, stride int, seed uint64, hs *uint64) *byte
TEXT ·hashGroupAsm(SB), NOSPLIT, $0-56
	I64Load p+0(FP)
	Set R10
	I64Load ls+8(FP)
	Set R11
	I64Load count+16(FP)
	Set R12
	I64Load hs+40(FP)
	Set R14
	Block
		Loop
			// Two keys, A and B, while two are left.
			Get R12
			I64Const $2
			I64LtU
			BrIf $1
			Get R10
			Set R0
			I64Load32U 0(R11)
			Set R1
			I64Load seed+32(FP)
			Set R9
			STRIPES(R0, R1, R2, 0)
			NEXT(R1)
			Get R10
			Set R3
			I64Load32U 4(R11)
			Set R13
			I64Load seed+32(FP)
			Set R9
			STRIPES(R3, R13, R15, 4)
			NEXT(R13)
			TAIL8(R0, R1, R2)
			TAIL8(R3, R13, R15)
			TAIL8(R0, R1, R2)
			TAIL8(R3, R13, R15)
			TAIL8(R0, R1, R2)
			TAIL8(R3, R13, R15)
			TAIL4(R0, R1, R2)
			TAIL4(R3, R13, R15)
			TAIL1(R0, R1, R2)
			TAIL1(R3, R13, R15)
			TAIL1(R0, R1, R2)
			TAIL1(R3, R13, R15)
			TAIL1(R0, R1, R2)
			TAIL1(R3, R13, R15)
			AVALANCHE(R2)
			AVALANCHE(R15)
			Get R14
			I32WrapI64
			Get R2
			I64Store $0
			Get R14
			I32WrapI64
			Get R15
			I64Store $8
			Get R11
			I64Const $8
			I64Add
			Set R11
			Get R14
			I64Const $16
			I64Add
			Set R14
			Get R12
			I64Const $2
			I64Sub
			Set R12
			Br $0
		End
	End
	// The last key of an odd count.
	Get R12
	I64Eqz
	I32Eqz
	If
		Get R10
		Set R0
		I64Load32U 0(R11)
		Set R1
		I64Load seed+32(FP)
		Set R9
		STRIPES(R0, R1, R2, 0)
		NEXT(R1)
		TAIL8(R0, R1, R2)
		TAIL8(R0, R1, R2)
		TAIL8(R0, R1, R2)
		TAIL4(R0, R1, R2)
		TAIL1(R0, R1, R2)
		TAIL1(R0, R1, R2)
		TAIL1(R0, R1, R2)
		AVALANCHE(R2)
		Get R14
		I32WrapI64
		Get R2
		I64Store $0
	End
	Get SP
	Get R10
	I64Store ret+48(FP)
	RET

// func memoryEnd() unsafe.Pointer
//
// memoryEnd returns the address one past the last byte of linear memory.
TEXT ·memoryEnd(SB), NOSPLIT, $0-8
	Get SP
	CurrentMemory
	I64ExtendI32U
	I64Const $16
	I64Shl
	I64Store ret+0(FP)
	RET
