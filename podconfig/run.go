package podconfig

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
)

// updatesBuffer is the capacity of the kubelet's PodConfig output channel.
const updatesBuffer = 50

// ErrAlreadyRun is returned by Run when it is called a second time on the same Config.
var ErrAlreadyRun = errors.New("pod config already run")

// Config is the kubelet's PodConfig: a mux with one unbuffered channel per source, whose listeners
// merge what they receive through one Storage and deliver the results to one output channel.
//
// Unlike the kubelet, which starts a listener when a channel is first asked for, Config starts its
// listeners in Run. Every source must therefore call Channel before Run; asking for a new source
// once Run has started panics rather than hand out a channel nobody reads.
type Config struct {
	// turn is a one-slot semaphore held for a whole merge and its delivery, the kubelet's
	// updateLock. It keeps the updates of one merge together and in order on Updates. It is a
	// channel rather than a mutex so that waiting for it can stop when the context ends.
	turn chan struct{}
	// updates is the output, buffered like the kubelet's.
	updates chan Update

	// mu guards storage, channels and started. It is never held while sending to updates, so
	// SeenAllSources and Channel stay responsive when the output is full, as in the kubelet,
	// whose readiness check does not take the update lock.
	mu       sync.Mutex
	storage  *Storage
	channels map[string]chan Update
	started  bool
}

// ErrNoStorage is returned by New without a Storage.
var ErrNoStorage = errors.New("storage is required")

// New returns a Config that merges through st, the Storage the kubelet's assembly built: the
// mux is the runner, the Storage its core, and a driver that steps the core itself (replay)
// never builds a Config. Sources registered with st before are configured sources already;
// Channel gives them their channels.
func New(st *Storage) (*Config, error) {
	if st == nil {
		return nil, fmt.Errorf("new pod config: %w", ErrNoStorage)
	}
	return &Config{
		turn:     make(chan struct{}, 1),
		updates:  make(chan Update, updatesBuffer),
		storage:  st,
		channels: make(map[string]chan Update),
	}, nil
}

// Channel registers source and returns the unbuffered channel it sends its updates on. Asking again
// for the same name returns the same channel. An empty name panics, as in the kubelet, and so does a
// new name once Run has started.
func (c *Config) Channel(source string) chan<- Update {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ch, ok := c.channels[source]; ok {
		return ch
	}
	if c.started {
		panic(fmt.Sprintf("podconfig: Channel(%q) called after Run started", source))
	}
	c.storage.Register(source)
	ch := make(chan Update)
	c.channels[source] = ch
	return ch
}

// Updates returns the channel the merged updates are delivered on. It holds up to 50 updates;
// when it is full, merging stops and the sources block on their sends.
func (c *Config) Updates() <-chan Update {
	return c.updates
}

// SeenAllSources reports whether every source registered with Channel is in seen and has sent at
// least one SET. See Storage.SeenAllSources.
func (c *Config) SeenAllSources(seen sets.Set[string]) bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.storage.SeenAllSources(seen)
}

// Sync delivers a SET from AllSource with every pod of every source on Updates, in order with the
// merges around it. It blocks while the output is full and returns ctx's error if ctx ends first.
func (c *Config) Sync(ctx context.Context) error {
	if err := c.acquire(ctx); err != nil {
		return err
	}
	defer c.release()
	c.mu.Lock()
	u := c.storage.Sync()
	c.mu.Unlock()
	return c.send(ctx, u)
}

// Run starts one listener per registered source and blocks until ctx is done and every listener
// has returned. It returns ErrAlreadyRun if called again.
func (c *Config) Run(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	c.mu.Lock()
	if c.started {
		c.mu.Unlock()
		return ErrAlreadyRun
	}
	c.started = true
	names := sortedKeys(c.channels)
	chans := make([]chan Update, len(names))
	for i, name := range names {
		chans[i] = c.channels[name]
	}
	c.mu.Unlock()

	logger.V(2).Info("Starting pod config", "sources", names)
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Go(func() { c.listen(ctx, name, chans[i]) })
	}
	<-ctx.Done()
	wg.Wait()
	logger.V(2).Info("Stopped pod config")
	return nil
}

// listen merges the updates of one source in the order it sends them until ctx is done.
func (c *Config) listen(ctx context.Context, source string, ch <-chan Update) {
	logger := klog.LoggerWithValues(klog.FromContext(ctx), "source", source)
	for {
		select {
		case <-ctx.Done():
			return
		case u := <-ch:
			if err := c.mergeAndDeliver(ctx, source, u); err != nil {
				logger.V(4).Info("Stopped delivering merged updates", "op", u.Op, "err", err)
				return
			}
		}
	}
}

// mergeAndDeliver merges u and sends the results while holding the turn, so that the merges of
// different sources never interleave on the output.
func (c *Config) mergeAndDeliver(ctx context.Context, source string, u Update) error {
	if err := c.acquire(ctx); err != nil {
		return err
	}
	defer c.release()
	c.mu.Lock()
	out := c.storage.Merge(source, u)
	c.mu.Unlock()
	for _, o := range out {
		if err := c.send(ctx, o); err != nil {
			return err
		}
	}
	return nil
}

func (c *Config) acquire(ctx context.Context) error {
	select {
	case c.turn <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *Config) release() { <-c.turn }

// send delivers u, blocking while the output is full, like the kubelet, but giving up when ctx ends.
func (c *Config) send(ctx context.Context, u Update) error {
	select {
	case c.updates <- u:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
