package git

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/nwdes/nwdes/gitstore/oid"
)

// BenchmarkEncodeTree1000: a directory of 1,000 directories given in a
// map's order, as a store's update encodes the trees it changed (the
// swarm's jobs/ tree, one entry a label).
func BenchmarkEncodeTree1000(b *testing.B) {
	id := oid.MustParse("0123456789abcdef0123456789abcdef01234567")
	es := make([]treeEntry, 1000)
	for i := range es {
		es[i] = treeEntry{name: fmt.Sprintf("card-%04d", i), mode: modeTree, hash: id}
	}
	r := rand.New(rand.NewPCG(1, 2))
	b.ReportAllocs()
	for b.Loop() {
		r.Shuffle(len(es), func(i, j int) { es[i], es[j] = es[j], es[i] })
		encodeTree(es)
	}
}
