//go:build race

package fakeapiserver

const raceEnabled = true
