package layout

import (
	"fmt"
	"math/big"
)

// Int128 is a signed 128-bit integer laid out as it is in little-endian
// memory: the low word first.
type Int128 struct {
	Lo uint64
	Hi int64
}

// Uint128 is an unsigned 128-bit integer, low word first.
type Uint128 struct {
	Lo, Hi uint64
}

var (
	two64     = new(big.Int).Lsh(big.NewInt(1), 64)
	two128    = new(big.Int).Lsh(big.NewInt(1), 128)
	minInt128 = new(big.Int).Neg(new(big.Int).Lsh(big.NewInt(1), 127))
	maxInt128 = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 127), big.NewInt(1))
)

// Big returns x as a *big.Int.
func (x Int128) Big() *big.Int {
	v := new(big.Int).SetUint64(x.Lo)
	if x.Hi >= 0 {
		return v.Add(v, new(big.Int).Lsh(big.NewInt(x.Hi), 64))
	}
	hi := new(big.Int).Mul(big.NewInt(x.Hi), two64)
	return v.Add(v, hi)
}

// String formats x in decimal.
func (x Int128) String() string { return x.Big().String() }

// Int128FromBig converts v, failing if it is outside the int128 range.
func Int128FromBig(v *big.Int) (Int128, error) {
	if v.Cmp(minInt128) < 0 || v.Cmp(maxInt128) > 0 {
		return Int128{}, fmt.Errorf("layout: %s overflows i128", v)
	}
	u := new(big.Int).Set(v)
	if u.Sign() < 0 {
		u.Add(u, two128)
	}
	lo := new(big.Int).And(u, new(big.Int).Sub(two64, big.NewInt(1))).Uint64()
	hi := new(big.Int).Rsh(u, 64).Uint64()
	return Int128{Lo: lo, Hi: int64(hi)}, nil
}

// Int128From widens a 64-bit integer.
func Int128From(v int64) Int128 { return Int128{Lo: uint64(v), Hi: v >> 63} }

// Big returns x as a *big.Int.
func (x Uint128) Big() *big.Int {
	v := new(big.Int).SetUint64(x.Hi)
	v.Lsh(v, 64)
	return v.Add(v, new(big.Int).SetUint64(x.Lo))
}

// String formats x in decimal.
func (x Uint128) String() string { return x.Big().String() }

// Uint128FromBig converts v, failing if it is negative or ≥ 2^128.
func Uint128FromBig(v *big.Int) (Uint128, error) {
	if v.Sign() < 0 || v.Cmp(two128) >= 0 {
		return Uint128{}, fmt.Errorf("layout: %s overflows u128", v)
	}
	lo := new(big.Int).And(v, new(big.Int).Sub(two64, big.NewInt(1))).Uint64()
	hi := new(big.Int).Rsh(v, 64).Uint64()
	return Uint128{Lo: lo, Hi: hi}, nil
}
