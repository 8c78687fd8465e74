//go:build !unix

package main

import "time"

// processCPU is 0 where there is no getrusage.
func processCPU() time.Duration { return 0 }
