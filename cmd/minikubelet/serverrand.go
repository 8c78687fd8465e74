package main

import (
	crand "crypto/rand"
	"encoding/binary"
	"math/rand"
)

// serverRand is the fake API server's source of UIDs and generateName suffixes in run and
// apiserver, seeded afresh at every start. A fixed seed would make a restarted server hand out
// the UIDs of pods the kubelets attached to it still hold, and those pods would never run.
// Replay seeds its server from the scenario instead, so that its UIDs repeat.
func serverRand() *rand.Rand {
	var seed [8]byte
	if _, err := crand.Read(seed[:]); err != nil {
		// crypto/rand does not fail on Linux; keep going with a seed that is at least not 1.
		binary.LittleEndian.PutUint64(seed[:], 0x9e3779b97f4a7c15)
	}
	return rand.New(rand.NewSource(int64(binary.LittleEndian.Uint64(seed[:]))))
}
