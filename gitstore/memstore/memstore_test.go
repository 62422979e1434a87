package memstore_test

import (
	"sync"
	"testing"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/gitstoretest"
	"github.com/nwdes/nwdes/gitstore/memstore"
)

func TestMemstoreConformsToTheRecordAndNoteHalf(t *testing.T) {
	var mu sync.Mutex
	stores := map[string]*memstore.Store{}
	gitstoretest.RunRecords(t, gitstoretest.RecordHarness{Open: func(t *testing.T, dir string, reg *gitstore.Registry) gitstoretest.Records {
		mu.Lock()
		defer mu.Unlock()
		if st, ok := stores[dir]; ok {
			return st
		}
		st, err := memstore.New(memstore.Options{Registry: reg})
		if err != nil {
			t.Fatal(err)
		}
		stores[dir] = st
		return st
	}})
}
