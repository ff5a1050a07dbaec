package theory

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"

	"routebench/internal/seeds"
)

// Check identifiers, mixed into every stream seed so that the checks never
// share random numbers.
const (
	streamMixing uint64 = iota + 1
	streamConcentration
	streamFarMass
	streamIncoherence
	streamPath
)

// newRNG returns the stream for one task (seeds.Theory, keyed by the
// check and the task). Each task owns its stream, which is what makes the
// outputs independent of scheduling and worker count.
func newRNG(seed uint64, keys ...uint64) *rand.Rand {
	return seeds.Rand(seed, seeds.Theory, keys...)
}

// job is one unit of parallel work. It writes only into its own result
// slot, prepared by the check that planned it.
type job struct {
	note string
	run  func(ctx context.Context) error
}

// runJobs executes jobs on workers goroutines. Results are reduced later
// in plan order, never in completion order.
func runJobs(ctx context.Context, workers int, jobs []job, progress func(done, total int64, note string)) error {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu       sync.Mutex
		done     int64
		firstErr error
		wg       sync.WaitGroup
	)
	total := int64(len(jobs))
	next := make(chan int)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				err := jobs[i].run(ctx)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = fmt.Errorf("theory: %s: %w", jobs[i].note, err)
					cancel()
				}
				done++
				if progress != nil {
					progress(done, total, jobs[i].note)
				}
				mu.Unlock()
			}
		}()
	}
feed:
	for i := range jobs {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}

// splitCounts divides n items into k nearly equal consecutive parts.
func splitCounts(n, k int) []int {
	if k > n {
		k = n
	}
	if k < 1 {
		k = 1
	}
	out := make([]int, k)
	for i := range out {
		out[i] = n / k
		if i < n%k {
			out[i]++
		}
	}
	return out
}
