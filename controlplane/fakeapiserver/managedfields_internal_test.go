package fakeapiserver

import (
	"testing"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver/internal/fieldmanager"
)

// fieldProbe is the Probe of the process's field manager, through which the tests reach the
// steps of a write's field tracking one at a time.
func fieldProbe(t testing.TB) fieldmanager.Probe {
	t.Helper()
	fm, err := fieldManager()
	if err != nil {
		t.Fatal(err)
	}
	return fm.Probe()
}
