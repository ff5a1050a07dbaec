package slurm

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Node is one stage of a plan as the scheduler sees it.
type Node struct {
	Name, Kind string
	// Recipe identifies what the stage computes before its inputs exist:
	// a hash of what its key hashes, with each input's recipe in place of
	// the input's output digest (stages are deterministic, so the same
	// recipe gives the same key), and of the store. The job name is built
	// from it, so a later submission recognises this one's jobs.
	Recipe    string
	Cached    bool
	Parents   []string // names of the nodes it reads
	Argv      []string // runs the stage alone against the store
	Resources Resources
}

// JobName is the Slurm job name of a recipe.
func JobName(recipe string) string { return "rb-" + recipe[:20] }

var unsafeFile = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// LogPath is where a node's job writes stdout and stderr (appended across
// requeues and resubmissions).
func LogPath(logDir string, n Node) string {
	return filepath.Join(logDir, unsafeFile.ReplaceAllString(n.Name, "_")+"."+n.Recipe[:12]+".log")
}

// Submitter turns nodes into sbatch jobs.
type Submitter struct {
	Client *Client
	Site   *Site
	LogDir string // job scripts and logs; created before the first sbatch
	Dir    string // where the jobs run
	DryRun bool   // print the sbatch lines, submit nothing
	Out    io.Writer
}

// Submitted is what a submission did, by node name.
type Submitted struct {
	New, Queued map[string]string // node -> job id: submitted now, or already pending/running
	Cached      int
}

// Submit submits one job per node that is not cached and has no active job
// of its name (one squeue call for the whole plan). Nodes must come in
// plan order (parents first). Jobs left pending forever behind a failed
// parent are cancelled and submitted again.
func (s *Submitter) Submit(nodes []Node) (*Submitted, error) {
	res := &Submitted{New: map[string]string{}, Queued: map[string]string{}}
	var names []string
	for _, n := range nodes {
		if !n.Cached {
			names = append(names, JobName(n.Recipe))
		}
	}
	jobs, err := s.Client.Queue(names)
	switch {
	case err != nil && s.DryRun:
		// A dry run shows the lines on a machine without a controller
		// too, as if nothing were queued.
		fmt.Fprintf(s.Out, "# squeue failed (%s): the lines below assume no job of this plan is queued\n", strings.Join(strings.Fields(err.Error()), " "))
	case err != nil:
		return nil, fmt.Errorf("slurm submit: listing this plan's jobs: %w", err)
	}
	latest := latestByName(jobs)
	var dead []string
	for _, j := range latest {
		if neverRuns(j) {
			dead = append(dead, j.ID)
		}
	}
	if len(dead) > 0 && !s.DryRun {
		if err := s.Client.Cancel(dead); err != nil {
			return nil, fmt.Errorf("slurm submit: cancelling jobs whose dependency failed (%s): %w", strings.Join(dead, ","), err)
		}
	}
	if !s.DryRun {
		if err := os.MkdirAll(s.LogDir, 0o775); err != nil {
			return nil, fmt.Errorf("slurm submit: creating the log directory (jobs whose log directory is missing fail silently): %w", err)
		}
	}
	for _, n := range nodes {
		if err := checkExtra(n.Name, n.Resources.Extra); err != nil {
			return nil, err
		}
	}
	jobOf := map[string]string{}
	for i, n := range nodes {
		if n.Cached {
			res.Cached++
			continue
		}
		if j, ok := latest[JobName(n.Recipe)]; ok && j.Active() && !neverRuns(j) {
			res.Queued[n.Name] = j.ID
			jobOf[n.Name] = j.ID
			continue
		}
		var deps []string
		for _, p := range n.Parents {
			if id, ok := jobOf[p]; ok {
				deps = append(deps, id)
			}
		}
		args := s.sbatchArgs(n, deps)
		script := filepath.Join(s.LogDir, filepath.Base(strings.TrimSuffix(LogPath(s.LogDir, n), ".log"))+".sbatch")
		argv := append(append([]string(nil), s.Site.wrap()...), n.Argv...)
		body := Script(ScriptSpec{Stage: n.Name, JobName: JobName(n.Recipe), Dir: s.Dir, Argv: argv, MaxRequeue: s.Site.maxRequeue(),
			Umask: s.Site.umask(), Setup: s.Site.setup()})
		if s.DryRun {
			// The line, then the script it would write, indented.
			fmt.Fprintf(s.Out, "sbatch --parsable %s %s\n", QuoteArgv(args), Quote(script))
			for _, l := range strings.Split(strings.TrimSuffix(body, "\n"), "\n") {
				fmt.Fprintf(s.Out, "    %s\n", l)
			}
			id := "<job" + strconv.Itoa(i) + ">"
			res.New[n.Name], jobOf[n.Name] = id, id
			continue
		}
		if err := writeScript(script, body); err != nil {
			return res, fmt.Errorf("slurm submit: writing the job script of %s: %w", n.Name, err)
		}
		id, err := s.Client.Sbatch(args, script)
		if err != nil {
			return res, fmt.Errorf("slurm submit: stage %s (%d jobs submitted before it): %w", n.Name, len(res.New), err)
		}
		res.New[n.Name], jobOf[n.Name] = id, id
		if s.Out != nil {
			fmt.Fprintf(s.Out, "submitted %-30s job %s  %s\n", n.Name, id, LogPath(s.LogDir, n))
		}
	}
	return res, nil
}

// sbatchArgs are one node's sbatch flags. singleton (no two jobs of one
// name run at once) makes two submissions racing past each other's squeue
// compute a stage once: the second job starts after the first ends and
// finds its output in the store.
func (s *Submitter) sbatchArgs(n Node, deps []string) []string {
	dep := "singleton"
	if len(deps) > 0 {
		dep = "afterok:" + strings.Join(deps, ":") + ",singleton"
	}
	log := LogPath(s.LogDir, n)
	args := []string{
		"--job-name=" + JobName(n.Recipe),
		"--comment=routebench " + n.Name,
		"--output=" + filenamePattern(log), "--error=" + filenamePattern(log), "--open-mode=append",
		"--dependency=" + dep, "--kill-on-invalid-dep=yes",
		"--requeue", fmt.Sprintf("--signal=B:USR1@%d", s.Site.signalSeconds()),
		"--chdir=" + s.Dir,
		// The submitter's environment less its own job's SLURM_* (see
		// submitEnv), stated rather than left to the site's default.
		"--export=ALL",
	}
	return append(args, n.Resources.Args()...)
}

// latestByName keeps the newest job (highest id) of each name.
func latestByName(jobs []Job) map[string]Job {
	m := map[string]Job{}
	for _, j := range jobs {
		if o, ok := m[j.Name]; !ok || jobNum(j.ID) > jobNum(o.ID) {
			m[j.Name] = j
		}
	}
	return m
}

func jobNum(id string) int {
	n, _ := strconv.Atoi(strings.SplitN(id, "_", 2)[0])
	return n
}

// neverRuns: a pending job whose dependency can no longer be met.
func neverRuns(j Job) bool {
	return strings.HasPrefix(j.State, "PENDING") && strings.Contains(j.Reason, "DependencyNeverSatisfied")
}

// filenamePattern escapes a path for sbatch's --output and --error, which
// read %j, %x, ... as patterns: a % in the store path is written %%. A
// path with a backslash turns pattern reading off and is passed as is.
func filenamePattern(path string) string {
	if strings.Contains(path, `\`) {
		return path
	}
	return strings.ReplaceAll(path, "%", "%%")
}

// writeScript writes a job script through a temp file renamed over the
// final name: never truncating a script an earlier job may be reading,
// never writing through a symlink planted at that name, and two
// submitters writing one script leave one whole copy.
func writeScript(path, body string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.WriteString(body)
	if err == nil {
		err = tmp.Chmod(0o755)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func (s *Site) wrap() []string {
	if s == nil {
		return nil
	}
	return s.Wrap
}

func (s *Site) setup() []string {
	if s == nil {
		return nil
	}
	return s.Setup
}
