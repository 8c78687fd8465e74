package results

import (
	"strconv"

	"k8s.io/apimachinery/pkg/types"
)

// Result is a probe result as the kubelet caches it.
type Result int

// The results. Unknown is only ever the startup worker's initial value: the container has not
// started yet.
const (
	Unknown Result = iota - 1
	Success
	Failure
)

// String returns "Success", "Failure" or "Unknown"; an out-of-range value prints as
// "Result(n)" instead of panicking.
func (r Result) String() string {
	switch r {
	case Unknown:
		return "Unknown"
	case Success:
		return "Success"
	case Failure:
		return "Failure"
	}
	return "Result(" + strconv.Itoa(int(r)) + ")"
}

// Update is a changed cache value: the kubelet's results.Update.
type Update struct {
	ContainerID string
	Result      Result
	PodUID      types.UID
}

// Cache maps container IDs to the last result set for them. It is a core: one goroutine, no lock.
type Cache struct {
	m map[string]Result
}

// NewCache returns an empty cache.
func NewCache() *Cache { return &Cache{m: map[string]Result{}} }

// Get returns the cached result for the container ID.
func (c *Cache) Get(containerID string) (Result, bool) {
	r, ok := c.m[containerID]
	return r, ok
}

// Set caches the result and reports whether it changed (or was absent): the kubelet sends an
// Update on its channel exactly then.
func (c *Cache) Set(containerID string, r Result) bool {
	prev, ok := c.m[containerID]
	c.m[containerID] = r
	return !ok || prev != r
}

// Remove drops the container ID's result; no update is sent.
func (c *Cache) Remove(containerID string) { delete(c.m, containerID) }

// Len returns how many container IDs have a result.
func (c *Cache) Len() int { return len(c.m) }
