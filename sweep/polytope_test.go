package sweep

import (
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"
)

// randomHalfSpaces are n half-spaces through or near the box's middle, with
// small coefficients, and ties as opposite pairs (a plane's lattice).
func randomHalfSpaces(rng *rand.Rand, dim, n int, lo, hi []int64, coef int64) []halfSpace {
	var hs []halfSpace
	for range n {
		g := make([]int64, dim)
		zero := true
		for i := range g {
			g[i] = rng.Int64N(2*coef+1) - coef
			zero = zero && g[i] == 0
		}
		if zero {
			continue
		}
		// Through a random point of the box, shifted a little.
		var c int64
		for i := range g {
			c -= g[i] * (lo[i] + rng.Int64N(hi[i]-lo[i]+1))
		}
		c += rng.Int64N(5) - 2
		hs = append(hs, halfSpace{g, c})
		if rng.IntN(6) == 0 {
			neg := make([]int64, dim)
			for i := range g {
				neg[i] = -g[i]
			}
			hs = append(hs, halfSpace{neg, -c})
		}
	}
	return hs
}

// bruteCount counts the box's integer points that satisfy every half-space.
func bruteCount(lo, hi []int64, hs []halfSpace) int64 {
	x := slices.Clone(lo)
	var n int64
	for {
		ok := true
		for _, h := range hs {
			if !h.holds(x) {
				ok = false
				break
			}
		}
		if ok {
			n++
		}
		i := 0
		for i < len(x) {
			if x[i] < hi[i] {
				x[i]++
				break
			}
			x[i] = lo[i]
			i++
		}
		if i == len(x) {
			return n
		}
	}
}

// randomBox is a box of dim axes near the origin, axis i spanning
// 1 + span(i) integers at most.
func randomBox(rng *rand.Rand, dim int, span func() int64) (lo, hi []int64) {
	lo, hi = make([]int64, dim), make([]int64, dim)
	for i := range dim {
		lo[i] = rng.Int64N(21) - 10
		hi[i] = lo[i] + span()
	}
	return lo, hi
}

// sliceBySlice counts a 3-axis box's integer points that satisfy hs, one
// slice across the first axis at a time, each by the two-axis count.
func sliceBySlice(lo, hi []int64, hs []halfSpace) *big.Int {
	n := new(big.Int)
	for s := lo[0]; s <= hi[0]; s++ {
		var ps []halfPlane
		for _, h := range hs {
			ps = append(ps, halfPlane{h.g[1], h.g[2], h.c + h.g[0]*s})
		}
		n.Add(n, latticeCount([2]int64{lo[1], lo[2]}, [2]int64{hi[1], hi[2]}, ps))
	}
	return n
}

func TestPolytopeCountsSmall(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 1500 {
		dim := 2 + trial%3
		lo, hi := randomBox(rng, dim, func() int64 { return rng.Int64N(map[int]int64{2: 30, 3: 16, 4: 8}[dim]) })
		hs := randomHalfSpaces(rng, dim, 1+rng.IntN(6), lo, hi, 4)
		want := bruteCount(lo, hi, hs)
		got, err := newPolytope(lo, hi, hs).latticePoints()
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		if got.Int64() != want {
			t.Fatalf("trial %d: dim %d box %v..%v %v: counted %v, brute force %d", trial, dim, lo, hi, hs, got, want)
		}
	}
}

// Long boxes, where most slices are summed by their residue classes'
// polynomials: against the sum of every slice counted by latticeCount.
func TestPolytopeCountsLong(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 60 {
		lo := []int64{-rng.Int64N(1000), rng.Int64N(40) - 20, rng.Int64N(40) - 20}
		hi := []int64{lo[0] + 2000 + rng.Int64N(20000), lo[1] + 10 + rng.Int64N(60), lo[2] + 10 + rng.Int64N(60)}
		hs := randomHalfSpaces(rng, 3, 2+rng.IntN(5), lo, hi, 3)
		// Shallow in x1, so that slices stay nonempty over long runs.
		for k := range hs {
			hs[k].g[0] = rng.Int64N(3) - 1
			hs[k].c = -(hs[k].g[0]*(lo[0]+hi[0])/2 + hs[k].g[1]*(lo[1]+hi[1])/2 + hs[k].g[2]*(lo[2]+hi[2])/2) + rng.Int64N(400)
		}
		want := sliceBySlice(lo, hi, hs)
		got, err := newPolytope(lo, hi, hs).latticePoints()
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		if got.Cmp(want) != 0 {
			t.Fatalf("trial %d: box %v..%v %v: counted %v, slice by slice %v", trial, lo, hi, hs, got, want)
		}
	}
}

// The vertices are exactly the feasible solutions of every dim of the
// half-spaces taken as equalities, and each satisfies every half-space.
func TestPolytopeVertices(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 400 {
		dim := 2 + trial%3
		lo, hi := randomBox(rng, dim, func() int64 { return 1 + rng.Int64N(10) })
		hs := randomHalfSpaces(rng, dim, 1+rng.IntN(5), lo, hi, 3)
		p := newPolytope(lo, hi, hs)
		all := append(boxSides(lo, hi), hs...)
		want := vertexBrute(dim, all)
		if p == nil {
			if len(want) != 0 {
				t.Fatalf("trial %d: empty, but %d vertices solve the half-spaces", trial, len(want))
			}
			continue
		}
		if len(p.verts) != len(want) {
			t.Fatalf("trial %d: %d vertices, %d by solving every %d half-spaces", trial, len(p.verts), len(want), dim)
		}
		for _, v := range p.verts {
			if !containsVec(want, v.x) {
				t.Fatalf("trial %d: vertex %v is not a solution", trial, v.x)
			}
			for _, h := range all {
				if h.value(v.x).Sign() > 0 {
					t.Fatalf("trial %d: vertex %v violates %v", trial, v.x, h)
				}
			}
		}
	}
}

// vertexBrute solves every dim of the half-spaces as equalities and keeps
// the feasible solutions, each once.
func vertexBrute(dim int, hs []halfSpace) []ratVec {
	var out []ratVec
	pick := make([]int, dim)
	var walk func(at, from int)
	walk = func(at, from int) {
		if at == dim {
			x, ok := solveRat(dim, hs, pick)
			if !ok {
				return
			}
			for _, h := range hs {
				if h.value(x).Sign() > 0 {
					return
				}
			}
			if !containsVec(out, x) {
				out = append(out, x)
			}
			return
		}
		for r := from; r < len(hs); r++ {
			pick[at] = r
			walk(at+1, r+1)
		}
	}
	walk(0, 0)
	return out
}

func containsVec(vs []ratVec, x ratVec) bool {
	for _, v := range vs {
		if sameVec(v, x) {
			return true
		}
	}
	return false
}

// solveRat solves g·x = −c for the picked half-spaces (false when
// singular).
func solveRat(dim int, hs []halfSpace, pick []int) (ratVec, bool) {
	m := make([][]*big.Rat, dim)
	for i, k := range pick {
		m[i] = make([]*big.Rat, dim+1)
		for j := range dim {
			m[i][j] = new(big.Rat).SetInt64(hs[k].g[j])
		}
		m[i][dim] = new(big.Rat).SetInt64(-hs[k].c)
	}
	for col := range dim {
		piv := -1
		for r := col; r < dim; r++ {
			if m[r][col].Sign() != 0 {
				piv = r
				break
			}
		}
		if piv < 0 {
			return nil, false
		}
		m[col], m[piv] = m[piv], m[col]
		for r := range dim {
			if r == col || m[r][col].Sign() == 0 {
				continue
			}
			f := new(big.Rat).Quo(m[r][col], m[col][col])
			for c := col; c <= dim; c++ {
				m[r][c].Sub(m[r][c], new(big.Rat).Mul(f, m[col][c]))
			}
		}
	}
	x := make(ratVec, dim)
	for i := range dim {
		x[i] = new(big.Rat).Quo(m[i][dim], m[i][i])
	}
	return x, true
}

// The closed-form sum's pieces: forward differences and Newton's form.
func TestForwardDiffs(t *testing.T) {
	d := forwardDiffs([]*big.Int{big.NewInt(1), big.NewInt(4), big.NewInt(9)})
	if got := newtonAt(d, 3); got.Int64() != 16 {
		t.Fatalf("the squares' polynomial at 3 = %v, want 16", got)
	}
}

// Gradients whose minors' least common multiple passes any closed-form
// budget (the first 18 primes: far past int64): the stretches are counted
// slice by slice, and the count is still exact.
func TestPolytopeLargePeriod(t *testing.T) {
	primes := []int64{2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61}
	lo, hi := []int64{0, 0, -4000}, []int64{400, 70, 4000}
	var hs []halfSpace
	for _, p := range primes {
		hs = append(hs, halfSpace{[]int64{1, p, 1}, -p * p / 4})
	}
	if _, ok := newPolytope(lo, hi, hs).slicePeriod(); ok {
		t.Fatal("the primes' period is within the closed-form budget")
	}
	got, err := newPolytope(lo, hi, hs).latticePoints()
	if err != nil {
		t.Fatal(err)
	}
	want := sliceBySlice(lo, hi, hs)
	if got.Cmp(want) != 0 {
		t.Fatalf("counted %v, slice by slice %v", got, want)
	}
}
