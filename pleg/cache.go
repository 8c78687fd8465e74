package pleg

import (
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/kubecontainer"
)

// Cache holds the last status the PLEG read for each pod, and the start time of the last relist
// that updated every pod that needed it: the kubelet's kubecontainer.Cache. It is part of the
// core: the goroutine that drives the PLEG and the pod workers drives it too, and it is not safe
// for concurrent use.
//
// As the kubelet's cache, it stores the status it is given and hands out that very status, not a
// copy: the runtime builds a new status at every read, the PLEG replaces an entry and never
// changes one, and every reader (the pod workers, the pod sync, the runtime's SyncPod, the
// container deleter, the kubelet server's snapshot) only reads it. A pod whose runtime status did
// not change between two syncs is handed the same pointer both times.
type Cache struct {
	pods      map[types.UID]cacheEntry
	timestamp time.Time
}

type cacheEntry struct {
	status   *kubecontainer.PodStatus
	err      error
	modified time.Time
}

// NewCache returns an empty Cache.
func NewCache() *Cache {
	return &Cache{pods: map[types.UID]cacheEntry{}}
}

// Get returns the cached status and error of the pod. A pod with no entry gets an empty status
// carrying only its UID, and no error.
func (c *Cache) Get(uid types.UID) (*kubecontainer.PodStatus, error) {
	e, ok := c.pods[uid]
	if !ok {
		return &kubecontainer.PodStatus{UID: uid}, nil
	}
	return e.status, e.err
}

// Set stores the status (possibly nil) and error read for the pod at timestamp. The cache keeps
// status itself: the caller hands it over and changes it no more.
func (c *Cache) Set(uid types.UID, status *kubecontainer.PodStatus, err error, timestamp time.Time) {
	c.pods[uid] = cacheEntry{status: status, err: err, modified: timestamp}
}

// Delete forgets the pod.
func (c *Cache) Delete(uid types.UID) {
	delete(c.pods, uid)
}

// UpdateTime sets the global timestamp: every pod's entry is at least as new as t.
func (c *Cache) UpdateTime(t time.Time) {
	c.timestamp = t
}

// Timestamp returns the global timestamp, zero before the first relist.
func (c *Cache) Timestamp() time.Time {
	return c.timestamp
}

// GetNewerThan returns the pod's status and error if its entry was modified after minTime, or if
// the global timestamp is after minTime (then a pod with no entry gets the empty status). ok is
// false otherwise: the kubelet's call would block until the next relist, and the caller should
// ask again after it. The error comes before ok because the pod workers' Cache interface says so.
func (c *Cache) GetNewerThan(uid types.UID, minTime time.Time) (*kubecontainer.PodStatus, error, bool) {
	e, ok := c.pods[uid]
	if ok && e.modified.After(minTime) {
		return e.status, e.err, true
	}
	if !c.timestamp.After(minTime) {
		return nil, nil, false
	}
	if !ok {
		return &kubecontainer.PodStatus{UID: uid}, nil, true
	}
	return e.status, e.err, true
}
