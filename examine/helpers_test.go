package examine_test

import "github.com/nwdes/nwdes/gitstore/oid"

func plumbingHash(s string) oid.ID { return oid.MustParse(s) }
