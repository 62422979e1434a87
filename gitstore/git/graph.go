package git

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/nwdes/nwdes/gitstore/oid"
)

// A commit-graph file (gitformat-commit-graph(5)), as git 2.39 writes it
// for either object format:
//
//	header   "CGPH", version 1, hash version (1 SHA-1, 2 SHA-256),
//	         number of chunks C, number of base graphs B
//	chunks   (C+1) × (4-byte id, 8-byte offset); the last id is 0 and its
//	         offset the end of the last chunk
//	OIDF     256 × uint32: commits whose first byte is <= i
//	OIDL     N ids, sorted
//	CDAT     N × (tree id, parent 1, parent 2, generation and time): the
//	         parents are positions in the whole chain (0x70000000: none;
//	         parent 2 with its top bit set indexes EDGE, an octopus's
//	         further parents, the last with its top bit set); the topological
//	         level is the top 30 bits of the last 8 bytes
//	EDGE     uint32 positions (optional)
//	BASE     B ids: the graphs below this one in a chain (optional)
//	trailer  the file's checksum
//
// Positions count the commits of the layers below first: a layer whose
// bases hold b commits holds positions b to b+N-1.

const (
	graphNoParent  = 0x70000000
	graphEdgeBit   = 0x80000000
	graphHeaderLen = 8
)

// graphLayer is one commit-graph file, its chunks checked against its size.
type graphLayer struct {
	m      *mappedFile
	hl     int    // bytes per id
	n      uint32 // commits in this file
	base   uint32 // commits in the layers below
	fanout []byte // 256 × uint32
	oids   []byte // n × hl
	cdat   []byte // n × (hl + 16)
	edges  []byte // 4-byte entries
}

// parseGraph checks a graph file of format f whose layers below are named
// bases and hold base commits.
func parseGraph(m *mappedFile, f oid.Format, bases []oid.ID, base uint32) (*graphLayer, error) {
	d := m.data
	hl := f.Size()
	if len(d) < graphHeaderLen+12+hl || string(d[:4]) != "CGPH" {
		return nil, errors.New("not a commit-graph file")
	}
	if d[4] != 1 {
		return nil, fmt.Errorf("commit-graph version %d", d[4])
	}
	if want := map[oid.Format]byte{oid.SHA1: 1, oid.SHA256: 2}[f]; d[5] != want {
		return nil, fmt.Errorf("commit-graph of hash version %d in a %s repository", d[5], f)
	}
	if int(d[7]) != len(bases) {
		return nil, fmt.Errorf("commit-graph has %d bases, its chain %d", d[7], len(bases))
	}
	c := int(d[6])
	table := graphHeaderLen + (c+1)*12
	end := uint64(len(d) - hl) // the chunks end before the checksum
	if table > len(d)-hl {
		return nil, errors.New("commit-graph chunk table past the end")
	}
	chunks := map[string][]byte{}
	for i := 0; i < c; i++ {
		e := d[graphHeaderLen+12*i:]
		id := string(e[:4])
		off := binary.BigEndian.Uint64(e[4:12])
		next := binary.BigEndian.Uint64(e[16:24])
		if off < uint64(table) || next < off || next > end {
			return nil, fmt.Errorf("commit-graph chunk %q out of range", id)
		}
		chunks[id] = d[off:next]
	}
	l := &graphLayer{m: m, hl: hl, base: base}
	l.fanout, l.oids, l.cdat, l.edges = chunks["OIDF"], chunks["OIDL"], chunks["CDAT"], chunks["EDGE"]
	if len(l.fanout) != 256*4 {
		return nil, errors.New("commit-graph has no fanout")
	}
	var prev uint32
	for i := 0; i < 256; i++ {
		v := binary.BigEndian.Uint32(l.fanout[4*i:])
		if v < prev {
			return nil, errors.New("commit-graph fanout not monotonic")
		}
		prev = v
	}
	l.n = prev
	if uint64(len(l.oids)) != uint64(l.n)*uint64(hl) || uint64(len(l.cdat)) != uint64(l.n)*uint64(hl+16) {
		return nil, fmt.Errorf("commit-graph of %d commits has id or data chunks of the wrong size", l.n)
	}
	if len(l.edges)%4 != 0 {
		return nil, errors.New("commit-graph EDGE chunk of a bad size")
	}
	if uint64(base)+uint64(l.n) >= graphNoParent {
		return nil, errors.New("commit-graph holds too many commits")
	}
	if len(bases) > 0 {
		var want []byte
		for _, b := range bases {
			want = append(want, b.Bytes()...)
		}
		if !bytes.Equal(chunks["BASE"], want) {
			return nil, errors.New("commit-graph BASE chunk does not name its chain")
		}
	}
	return l, nil
}

// find returns h's position in the chain.
func (g *commitGraph) find(h oid.ID) (uint32, bool) {
	raw := h.Raw()
	for i := len(g.layers) - 1; i >= 0; i-- {
		l := g.layers[i]
		key := raw[:l.hl]
		lo := uint32(0)
		if key[0] > 0 {
			lo = binary.BigEndian.Uint32(l.fanout[4*(int(key[0])-1):])
		}
		hi := binary.BigEndian.Uint32(l.fanout[4*int(key[0]):])
		for lo < hi {
			m := lo + (hi-lo)/2
			switch c := bytes.Compare(key, l.oids[int(m)*l.hl:int(m+1)*l.hl]); {
			case c == 0:
				return l.base + m, true
			case c < 0:
				hi = m
			default:
				lo = m + 1
			}
		}
	}
	return 0, false
}

// layerOf returns the layer holding position pos and pos within it.
func (g *commitGraph) layerOf(pos uint32) (*graphLayer, uint32, error) {
	for _, l := range g.layers {
		if pos >= l.base && pos < l.base+l.n {
			return l, pos - l.base, nil
		}
	}
	return nil, 0, fmt.Errorf("commit position %d out of range", pos)
}

// oidAt is the id of the commit at pos.
func (g *commitGraph) oidAt(pos uint32) (oid.ID, error) {
	l, i, err := g.layerOf(pos)
	if err != nil {
		return oid.Zero, err
	}
	id, ok := fromRaw(g.f, l.oids[int(i)*l.hl:int(i+1)*l.hl])
	if !ok || id.IsZero() {
		return oid.Zero, fmt.Errorf("commit position %d has no id", pos)
	}
	return id, nil
}

// graphCommit is what CDAT says of one commit.
type graphCommit struct {
	gen     uint64
	parents []uint32
}

// commit reads the commit data at pos. A parent must lie in the layer of
// the commit or below (git writes no other), so that parents always lead
// down and a damaged position cannot point anywhere else.
func (g *commitGraph) commit(pos uint32) (graphCommit, error) {
	l, i, err := g.layerOf(pos)
	if err != nil {
		return graphCommit{}, err
	}
	e := l.cdat[int(i)*(l.hl+16):]
	p1 := binary.BigEndian.Uint32(e[l.hl:])
	p2 := binary.BigEndian.Uint32(e[l.hl+4:])
	c := graphCommit{gen: binary.BigEndian.Uint64(e[l.hl+8:]) >> 34}
	limit := l.base + l.n
	add := func(p uint32) error {
		if p >= limit {
			return fmt.Errorf("commit position %d names parent %d past the graph", pos, p)
		}
		c.parents = append(c.parents, p)
		return nil
	}
	if p1 == graphNoParent {
		return c, nil
	}
	if err := add(p1); err != nil {
		return graphCommit{}, err
	}
	switch {
	case p2 == graphNoParent:
	case p2&graphEdgeBit == 0:
		if err := add(p2); err != nil {
			return graphCommit{}, err
		}
	default:
		for k := int(p2 &^ graphEdgeBit); ; k++ {
			if 4*k+4 > len(l.edges) {
				return graphCommit{}, fmt.Errorf("commit position %d: EDGE list runs past the end", pos)
			}
			v := binary.BigEndian.Uint32(l.edges[4*k:])
			if err := add(v &^ graphEdgeBit); err != nil {
				return graphCommit{}, err
			}
			if v&graphEdgeBit != 0 {
				break
			}
		}
	}
	return c, nil
}
