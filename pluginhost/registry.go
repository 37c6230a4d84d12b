package pluginhost

import (
	"context"
	"os"
	"os/signal"
	"slices"
	"sync"
	"syscall"
)

// Registry tracks launched plugin processes so that all of them can be
// killed on shutdown, also when the host gets SIGINT or SIGTERM. The zero
// value is ready to use.
type Registry struct {
	mu      sync.Mutex
	clients []*Client
}

// Launch launches spec (see Launch) and tracks the process.
func (r *Registry) Launch(ctx context.Context, spec Spec) (*Client, error) {
	c, err := Launch(ctx, spec)
	if err != nil {
		return nil, err
	}
	r.track(c)
	return c, nil
}

// LaunchAll launches specs concurrently (see LaunchAll) and tracks them.
func (r *Registry) LaunchAll(ctx context.Context, specs []Spec) ([]*Client, error) {
	cs, err := LaunchAll(ctx, specs)
	if err != nil {
		return nil, err
	}
	r.track(cs...)
	return cs, nil
}

func (r *Registry) track(cs ...*Client) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.clients = slices.DeleteFunc(r.clients, func(c *Client) bool { return c.Exited() })
	r.clients = append(r.clients, cs...)
}

// Len is the number of tracked processes that have not exited.
func (r *Registry) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, c := range r.clients {
		if !c.Exited() {
			n++
		}
	}
	return n
}

// KillAll kills every tracked process concurrently and forgets them.
func (r *Registry) KillAll() {
	r.mu.Lock()
	cs := r.clients
	r.clients = nil
	r.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range cs {
		wg.Go(c.Kill)
	}
	wg.Wait()
}

// KillOnSignal kills every tracked process when the host receives one of
// sigs (default SIGINT and SIGTERM), then calls then with the signal; a nil
// then re-raises the signal with its default action, so the host exits as
// it would have. stop uninstalls the handler.
func (r *Registry) KillOnSignal(then func(os.Signal), sigs ...os.Signal) (stop func()) {
	if len(sigs) == 0 {
		sigs = []os.Signal{os.Interrupt, syscall.SIGTERM}
	}
	ch := make(chan os.Signal, 1)
	done := make(chan struct{})
	signal.Notify(ch, sigs...)
	go func() {
		select {
		case sig := <-ch:
			r.KillAll()
			signal.Stop(ch)
			if then != nil {
				then(sig)
				return
			}
			signal.Reset(sig)
			if s, ok := sig.(syscall.Signal); ok {
				_ = syscall.Kill(os.Getpid(), s)
			}
		case <-done:
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			signal.Stop(ch)
			close(done)
		})
	}
}
