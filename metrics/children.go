package metrics

// children memoizes a vector's children by their label values, each created at its first use,
// as WithLabelValues creates it (a series appears once first recorded, as in the kubelet). The
// idle path records the same few series at every relist and housekeeping pass: looking each up
// in its vector hashes the labels and type-asserts the child, and the Go runtime fills a call
// site's type assertion cache at a random one of its calls, an allocation at a random moment of
// an idle node. A child looked up once is kept. Written, like the Registry, from the one
// goroutine that drives the node's cores.
type children[K comparable, T any] struct {
	m   map[K]T
	new func(K) T
}

// get returns the child for k, created at its first use.
func (c *children[K, T]) get(k K) T {
	if v, ok := c.m[k]; ok {
		return v
	}
	if c.m == nil {
		c.m = map[K]T{}
	}
	v := c.new(k)
	c.m[k] = v
	return v
}
