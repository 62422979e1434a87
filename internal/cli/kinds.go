package cli

import (
	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/gitstore"
)

// allKinds is every record kind this build reads, for fsck.
func allKinds() gitstore.Kinds {
	k := gitstore.Kinds{}
	for kind, v := range examine.Kinds() {
		k[kind] = v
	}
	for kind, v := range examine.GateKinds() {
		k[kind] = v
	}
	return k
}
