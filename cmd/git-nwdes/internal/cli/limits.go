package cli

import (
	"fmt"

	"github.com/nwdes/nwdes/internal/boundedio"
	"github.com/nwdes/nwdes/ledger"
	"github.com/nwdes/nwdes/swarm"
	"github.com/nwdes/nwdes/trace"
	"github.com/nwdes/nwdes/trust"
)

// The bound of every file and stream the verbs read, one per use
// (docs/cli.md, Input bounds). Each is read through boundedio: a regular
// file only (or - for stdin), at most its limit, an input over it refused
// InputTooLarge. Where a parser holds its own, smaller limit on what it
// keeps (an event's 64 KiB of canonical JSON), the file may be larger
// (indented), and the parser refuses by its own rule.
var (
	eventFileLimit = boundedio.Limit{Bytes: 1 << 20, Of: "an event file",
		Remedy: fmt.Sprintf("record less in one event (its canonical JSON may hold %d bytes), or give it by --event", ledger.MaxEvent)}
	startLimit = boundedio.Limit{Bytes: 1 << 20, Of: "a trial's start record",
		Remedy: "give the start record alone, as the reference writes it"}
	ledgerFileLimit = boundedio.Limit{Bytes: 64 << 20, Of: "a ledger file",
		Remedy: "grade the ledger from the store (--ledger NAME), or split the file at a window"}
	bundleLimit = boundedio.Limit{Bytes: trace.DefaultMaxRecordBytes, Of: "a trace bundle",
		Remedy: "seal fewer events in one bundle"}
	workerLimit = boundedio.Limit{Bytes: 1 << 20, Of: "a worker description",
		Remedy: "describe the worker in less: its command, its slots and its paths"}
	cardLimit = boundedio.Limit{Bytes: swarm.MaxCardSize, Of: "a card",
		Remedy: "write a shorter card; put long material in the repository and name it"}
	keyFileLimit = boundedio.Limit{Bytes: trust.MaxKeyFileBytes, Of: "an SSH key file",
		Remedy: "name a public key file (id_ed25519.pub), or give the key itself"}
	policyLimit = boundedio.Limit{Bytes: trust.MaxPolicyBytes, Of: "a signing policy",
		Remedy: "keep one line per feature pattern and key in " + trust.PolicyPath}
	hookInputLimit = boundedio.Limit{Bytes: 64 << 20, Of: "a hook's input",
		Remedy: "push fewer refs at once"}
)
