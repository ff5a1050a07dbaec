package slurm

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"routebench/artifacts"
)

// Node is one stage of a plan as the scheduler sees it.
type Node struct {
	Name, Kind string
	// Recipe identifies what the stage computes before its inputs exist:
	// a hash of what its key hashes, with each input's recipe in place of
	// the input's output digest (stages are deterministic, so the same
	// recipe gives the same key), and of the store. The job name is built
	// from it, so a later submission recognises this one's jobs.
	Recipe string
	Cached bool
	// Gone is set for a node that is not cached although a run log of the
	// store names its key done: why the store misses it now (removed,
	// collected, damaged). Status shows it missing, not done-unseen.
	Gone      string
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
	// Mkdir creates the log dir (nil: os.MkdirAll, 0775 less the umask).
	// A store's MkdirAll gives it the store's mode and group: both users of
	// a group store write job scripts and logs there.
	Mkdir  func(dir string) error
	Dir    string // where the jobs run
	DryRun bool   // print the sbatch lines, submit nothing
	Out    io.Writer

	lastOfKind map[string]string // kind -> its last job submitted (kindChain)
}

// Submitted is what a submission did, by node name.
type Submitted struct {
	New, Queued map[string]string // node -> job id: submitted now, or already pending/running ("123_4": an array task)
	Cached      int
	Arrays      []Array           // the job arrays submitted now
	Retried     map[string]string // node -> the job that ran out of memory, for stages submitted again with mem_retry
}

// Array is one job array of a submission.
type Array struct {
	Name, JobID, Spec string // Spec: the --array value
	Stages            []string
}

// Submit submits every node that is not cached and has no active job of
// its own (one squeue call for the whole plan). Nodes must come in plan
// order (parents first). Independent nodes of one kind that ask for the
// same resources go in one job array (see group); a node alone in its
// group is a job of its own. Jobs left pending forever behind a failed
// parent are cancelled and submitted again; a stage whose last job ran out
// of memory is submitted alone with the site's mem_retry.
func (s *Submitter) Submit(nodes []Node) (*Submitted, error) {
	res := &Submitted{New: map[string]string{}, Queued: map[string]string{}, Retried: map[string]string{}}
	refs := s.arrayRefs(nodes)
	jobs, err := s.Client.Queue(jobNames(nodes, refs))
	switch {
	case err != nil && s.DryRun:
		// A dry run shows the lines on a machine without a controller
		// too, as if nothing were queued.
		fmt.Fprintf(s.Out, "# squeue failed (%s): the lines below assume no job of this plan is queued\n", strings.Join(strings.Fields(err.Error()), " "))
	case err != nil:
		return nil, fmt.Errorf("slurm submit: listing this plan's jobs: %w", err)
	}
	var dead []string
	for _, n := range nodes {
		if j, ok := findJob(n, refs[n.Name], jobs); !n.Cached && ok && neverRuns(j) {
			dead = append(dead, j.ID)
		}
	}
	if len(dead) > 0 && !s.DryRun {
		if err := s.Client.Cancel(dead); err != nil {
			return nil, fmt.Errorf("slurm submit: cancelling jobs whose dependency failed (%s): %w", strings.Join(dead, ","), err)
		}
	}
	if !s.DryRun {
		mkdir := s.Mkdir
		if mkdir == nil {
			mkdir = func(dir string) error { return os.MkdirAll(dir, 0o775) }
		}
		if err := mkdir(s.LogDir); err != nil {
			return nil, fmt.Errorf("slurm submit: creating the log directory (jobs whose log directory is missing fail silently): %w", err)
		}
	}
	for _, n := range nodes {
		if err := checkExtra(n.Name, n.Resources.Extra); err != nil {
			return nil, err
		}
	}
	jobOf := map[string]string{} // node -> its job: "123", or "123_4" for an array task
	var todo []*toSubmit
	for i, n := range nodes {
		if n.Cached {
			res.Cached++
			continue
		}
		j, ok := findJob(n, refs[n.Name], jobs)
		if ok && j.Active() && !neverRuns(j) {
			res.Queued[n.Name] = j.ID
			jobOf[n.Name] = j.ID
			continue
		}
		t := &toSubmit{node: n, plan: i, res: n.Resources}
		if ok && OutOfMemory(j.State) && n.Resources.MemRetry != "" {
			// Alone, so that its siblings keep the memory they asked for.
			t.res.Mem, t.retryOf = n.Resources.MemRetry, j
			res.Retried[n.Name] = j.ID
		}
		todo = append(todo, t)
	}
	tasksOf := map[string][]string{} // array job id -> the task refs submitted now
	s.lastOfKind = map[string]string{}
	for _, g := range s.group(todo) {
		if err := s.submitGroup(g, jobOf, tasksOf, res); err != nil {
			return res, err
		}
	}
	return res, nil
}

// kindChain is the job a new job of kind must wait for (afterany) under
// the site's array_throttle_total: the kind's job submitted last in this
// submission, so that one of the kind's jobs runs at a time and each
// array's throttle is the kind's total; nil where the site sets no total.
func (s *Submitter) kindChain(kind string) []string {
	if !s.Site.chainsKinds() || s.lastOfKind[kind] == "" {
		return nil
	}
	return []string{s.lastOfKind[kind]}
}

func (s *Submitter) chained(kind, id string) {
	if s.lastOfKind != nil {
		s.lastOfKind[kind] = id
	}
}

// arrayBroken breaks one piece of job arrays for the mutation check of
// their test ("index": members lined up with a parent array keep their
// plan-order index, so aftercorr would wait for another member's input).
var arrayBroken string

// toSubmit is a node a submission submits.
type toSubmit struct {
	node    Node
	plan    int // index in the plan
	res     Resources
	retryOf Job // the job that ran out of memory, for a mem_retry submission
}

// group puts the nodes to submit into jobs: a job array for the nodes of
// one kind, binary and resources (but the time: an array gets its
// members' longest) at one depth of the submission (a node's depth is one
// more than its deepest parent's that is submitted too, so no member of
// an array reads another, and every group comes after its parents'
// groups), at most the site's array_max each. A mem_retry submission is a
// job of its own. Groups come by depth, then plan order.
func (s *Submitter) group(todo []*toSubmit) [][]*toSubmit {
	depth := map[string]int{}
	type keyed struct {
		depth int
		nodes []*toSubmit
	}
	var groups []*keyed
	byKey := map[string]*keyed{}
	for _, t := range todo {
		d := 0
		for _, p := range t.node.Parents {
			if pd, ok := depth[p]; ok {
				d = max(d, pd+1)
			}
		}
		depth[t.node.Name] = d
		r := t.res
		if _, ok := slurmDuration(r.Time); ok {
			r.Time = ""
		}
		key := fmt.Sprintf("%d\x00%s\x00%s\x00%s\x00%s", d, t.node.Kind, argv0(t.node.Argv), strings.Join(r.Args(), " "), r.MemRetry)
		if t.retryOf.ID != "" {
			key += "\x00retry " + t.node.Name
		}
		g := byKey[key]
		if g == nil || len(g.nodes) >= s.Site.arrayMax() {
			g = &keyed{depth: d}
			byKey[key] = g
			groups = append(groups, g)
		}
		g.nodes = append(g.nodes, t)
	}
	sort.SliceStable(groups, func(a, b int) bool { return groups[a].depth < groups[b].depth })
	out := make([][]*toSubmit, len(groups))
	for i, g := range groups {
		out[i] = g.nodes
	}
	return out
}

func argv0(argv []string) string {
	if len(argv) == 0 {
		return ""
	}
	return argv[0]
}

// submitGroup submits one group: a job of its own for one node, else job
// arrays. Dependencies are an array's, shared by every task, so they are
// built to be right for each member:
//
//   - the members that read exactly one task each of one parent array,
//     each a different task, take those tasks' indices and wait with
//     aftercorr on that array: task i starts when the parent's task i has
//     succeeded, and only task i is cancelled if it fails (an evaluate
//     array after its train array). The other members (an evaluate that
//     reads a train another member reads too) go in a job array of their
//     own, formed the same way;
//   - every other input's job (a single job, or a task of an array that
//     does not line up) is an afterok of the whole array: each member
//     waits for its own inputs and its siblings' (a failure there cancels
//     the whole array; --wait and a later submit submit it again).
func (s *Submitter) submitGroup(g []*toSubmit, jobOf map[string]string, tasksOf map[string][]string, res *Submitted) error {
	if len(g) == 1 {
		return s.submitOne(g[0], jobOf, tasksOf, res)
	}
	parents := make([][]string, len(g)) // each member's inputs' jobs
	for i, t := range g {
		for _, p := range t.node.Parents {
			if id, ok := jobOf[p]; ok {
				parents[i] = append(parents[i], id)
			}
		}
	}
	corr, index, rest := alignedArray(parents)
	if arrayBroken == "index" && corr != "" {
		for i := range index {
			index[i] = i // plan order, as if each member's index were its own
		}
	}
	if corr == "" {
		index = make([]int, len(g))
		for i := range g {
			index[i] = i
		}
		return s.submitArray(g, parents, "", index, jobOf, tasksOf, res)
	}
	var in, out []*toSubmit
	var inParents [][]string
	var inIndex []int
	for i, t := range g {
		if rest[i] {
			out = append(out, t)
			continue
		}
		in, inParents, inIndex = append(in, t), append(inParents, parents[i]), append(inIndex, index[i])
	}
	if err := s.submitArray(in, inParents, corr, inIndex, jobOf, tasksOf, res); err != nil {
		return err
	}
	if len(out) == 0 {
		return nil
	}
	return s.submitGroup(out, jobOf, tasksOf, res)
}

func (s *Submitter) submitOne(t *toSubmit, jobOf map[string]string, tasksOf map[string][]string, res *Submitted) error {
	n := t.node
	var deps []string
	for _, p := range n.Parents {
		if id, ok := jobOf[p]; ok {
			deps = append(deps, id)
		}
	}
	comment := "routebench " + n.Name
	if t.retryOf.ID != "" {
		comment += fmt.Sprintf(" (mem_retry after job %s ran out of memory)", t.retryOf.ID)
	}
	log := LogPath(s.LogDir, n)
	args := s.sbatchArgs(JobName(n.Recipe), comment, filenamePattern(log), depSpec("", wholeArrays(deps, tasksOf), s.kindChain(n.Kind)), t.res)
	script := strings.TrimSuffix(log, ".log") + ".sbatch"
	argv := append(append([]string(nil), s.Site.wrap()...), n.Argv...)
	body := Script(ScriptSpec{Stage: n.Name, JobName: JobName(n.Recipe), Dir: s.Dir, Argv: argv, MaxRequeue: s.Site.maxRequeue(),
		Umask: s.Site.umask(), Setup: s.Site.setup()})
	id, err := s.sbatch(args, script, body, t.plan, n.Name, len(res.New))
	if err != nil {
		return err
	}
	res.New[n.Name], jobOf[n.Name] = id, id
	s.chained(n.Kind, id)
	if s.Out != nil && !s.DryRun {
		note := ""
		if t.retryOf.ID != "" {
			note = fmt.Sprintf("  (mem_retry %s: job %s ran out of memory at %s)", t.res.Mem, t.retryOf.ID, orQuestion(t.retryOf.Mem))
		}
		fmt.Fprintf(s.Out, "submitted %-30s job %s  %s%s\n", n.Name, id, log, note)
	}
	return nil
}

func orQuestion(s string) string {
	if s == "" {
		return "?"
	}
	return s
}

// submitArray submits a group as one job array whose task index[i] runs
// member i, with aftercorr on the array corr ("" for none) and afterok on
// every other input's job (see submitGroup).
func (s *Submitter) submitArray(g []*toSubmit, parents [][]string, corr string, index []int, jobOf map[string]string, tasksOf map[string][]string, res *Submitted) error {
	var afterok []string
	seen := map[string]bool{}
	for _, ps := range parents {
		for _, p := range ps {
			if a, _, ok := (Job{ID: p}).ArrayTask(); (ok && a == corr) || seen[p] {
				continue
			}
			seen[p] = true
			afterok = append(afterok, p)
		}
	}
	// The array's name, like a stage's job name, is a hash of what it runs:
	// a second submission of the same members at the same indices names it
	// alike, and singleton keeps the two from running at once.
	h := sha256.New()
	fmt.Fprintf(h, "slurm-array-v1 %s\n", g[0].node.Kind)
	for i, t := range g {
		fmt.Fprintf(h, "%d %s\n", index[i], t.node.Recipe)
	}
	name := "rb-" + hex.EncodeToString(h.Sum(nil))[:20]
	r := g[0].res
	longest := time.Duration(0)
	for _, t := range g {
		if d, ok := slurmDuration(t.res.Time); ok && d > longest {
			longest, r.Time = d, t.res.Time
		}
	}
	tasks := make([]ArrayTask, len(g))
	for i, t := range g {
		tasks[i] = ArrayTask{Index: index[i], Stage: t.node.Name, Argv: append(append([]string(nil), s.Site.wrap()...), t.node.Argv...),
			Log: ArrayLogPath(s.LogDir, name, index[i])}
	}
	spec := arraySpec(index, s.Site.arrayThrottle())
	args := s.sbatchArgs(name, "routebench "+g[0].node.Kind+" array", filenamePattern(filepath.Join(s.LogDir, name))+".%a.log",
		depSpec(corr, wholeArrays(afterok, tasksOf), s.kindChain(g[0].node.Kind)), r)
	args = append(args, "--array="+spec)
	body := Script(ScriptSpec{JobName: name, Dir: s.Dir, Tasks: tasks, MaxRequeue: s.Site.maxRequeue(), Umask: s.Site.umask(), Setup: s.Site.setup()})
	if !s.DryRun {
		// Before sbatch: a status that finds the array's jobs must know
		// which task is which stage.
		for i, t := range g {
			if err := writeFile(arrayRefPath(s.LogDir, t.node), fmt.Sprintf("%s %d\n", name, index[i]), 0o664); err != nil {
				return fmt.Errorf("slurm submit: recording stage %s's task in job array %s: %w", t.node.Name, name, err)
			}
		}
	}
	stages := make([]string, len(g))
	for i, t := range g {
		stages[i] = t.node.Name
	}
	id, err := s.sbatch(args, filepath.Join(s.LogDir, name+".sbatch"), body, g[0].plan, strings.Join(stages, ", "), len(res.New))
	if err != nil {
		return err
	}
	res.Arrays = append(res.Arrays, Array{Name: name, JobID: id, Spec: spec, Stages: stages})
	s.chained(g[0].node.Kind, id)
	if s.Out != nil && !s.DryRun {
		fmt.Fprintf(s.Out, "array %s: job %s, %d tasks (--array=%s)\n", name, id, len(g), spec)
	}
	for i, t := range g {
		ref := id + "_" + strconv.Itoa(index[i])
		res.New[t.node.Name], jobOf[t.node.Name] = ref, ref
		tasksOf[id] = append(tasksOf[id], ref)
		if s.Out != nil && !s.DryRun {
			fmt.Fprintf(s.Out, "submitted %-30s job %s  %s\n", t.node.Name, ref, tasks[i].Log)
		}
	}
	return nil
}

// sbatch writes a job script and submits it, or prints both (dry run,
// with a placeholder id from the plan index).
func (s *Submitter) sbatch(args []string, script, body string, plan int, what string, before int) (string, error) {
	if s.DryRun {
		// The line, then the script it would write, indented.
		fmt.Fprintf(s.Out, "sbatch --parsable %s %s\n", QuoteArgv(args), Quote(script))
		for _, l := range strings.Split(strings.TrimSuffix(body, "\n"), "\n") {
			fmt.Fprintf(s.Out, "    %s\n", l)
		}
		return "<job" + strconv.Itoa(plan) + ">", nil
	}
	if err := writeScript(script, body); err != nil {
		return "", fmt.Errorf("slurm submit: writing the job script of %s: %w", what, err)
	}
	id, err := s.Client.Sbatch(args, script)
	if err != nil {
		return "", fmt.Errorf("slurm submit: stage %s (%d jobs submitted before it): %w", what, before, err)
	}
	return id, nil
}

// alignedArray finds the parent array most members line up with: each
// reads exactly one of its tasks, a different task each. It returns the
// array's job id, each member's task index there, and the members that
// do not line up (rest); "" where fewer than two members line up with any.
func alignedArray(parents [][]string) (corr string, index []int, rest []bool) {
	var cands []string
	seen := map[string]bool{}
	for _, ps := range parents {
		for _, p := range ps {
			if a, _, ok := (Job{ID: p}).ArrayTask(); ok && !seen[a] {
				seen[a] = true
				cands = append(cands, a)
			}
		}
	}
	best := 0
	for _, a := range cands {
		ix := make([]int, len(parents))
		out := make([]bool, len(parents))
		used := map[int]bool{}
		n := 0
		for i, ps := range parents {
			k := 0
			for _, p := range ps {
				if pa, t, ok := (Job{ID: p}).ArrayTask(); ok && pa == a {
					k++
					ix[i] = t
				}
			}
			if k != 1 || used[ix[i]] {
				out[i] = true
				continue
			}
			used[ix[i]] = true
			n++
		}
		if n >= 2 && n > best {
			best, corr, index, rest = n, a, ix, out
		}
	}
	return corr, index, rest
}

// wholeArrays writes a dependency on every task an array of this
// submission has as one dependency on the array.
func wholeArrays(refs []string, tasksOf map[string][]string) []string {
	need := map[string]int{}
	for _, r := range refs {
		if a, _, ok := (Job{ID: r}).ArrayTask(); ok {
			need[a]++
		}
	}
	var out []string
	done := map[string]bool{}
	for _, r := range refs {
		a, _, ok := (Job{ID: r}).ArrayTask()
		switch {
		case ok && need[a] == len(tasksOf[a]) && done[a]:
		case ok && need[a] == len(tasksOf[a]):
			done[a] = true
			out = append(out, a)
		default:
			out = append(out, r)
		}
	}
	return out
}

// depSpec is a job's --dependency: aftercorr on an array whose tasks
// line up, afterok on every other input's job, afterany on the job of its
// kind before it (array_throttle_total), and singleton.
func depSpec(corr string, afterok, afterany []string) string {
	var parts []string
	if corr != "" {
		parts = append(parts, "aftercorr:"+corr)
	}
	if len(afterok) > 0 {
		parts = append(parts, "afterok:"+strings.Join(afterok, ":"))
	}
	if len(afterany) > 0 {
		parts = append(parts, "afterany:"+strings.Join(afterany, ":"))
	}
	return strings.Join(append(parts, "singleton"), ",")
}

// arraySpec is an --array value: the indices as ranges, then the throttle.
func arraySpec(index []int, throttle int) string {
	ix := append([]int(nil), index...)
	sort.Ints(ix)
	var parts []string
	for i := 0; i < len(ix); {
		j := i
		for j+1 < len(ix) && ix[j+1] == ix[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(ix[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", ix[i], ix[j]))
		}
		i = j + 1
	}
	spec := strings.Join(parts, ",")
	if throttle > 0 {
		spec += "%" + strconv.Itoa(throttle)
	}
	return spec
}

// slurmDuration reads a --time value ([D-]H:MM:SS, MM:SS, MM).
func slurmDuration(v string) (time.Duration, bool) {
	days := 0
	if d, rest, ok := strings.Cut(v, "-"); ok {
		n, err := strconv.Atoi(d)
		if err != nil {
			return 0, false
		}
		days, v = n, rest
	}
	f := strings.Split(v, ":")
	if v == "" || len(f) > 3 {
		return 0, false
	}
	var n []int
	for _, x := range f {
		k, err := strconv.Atoi(x)
		if err != nil || k < 0 {
			return 0, false
		}
		n = append(n, k)
	}
	var h, m, sec int
	switch len(n) {
	case 1:
		m = n[0]
	case 2:
		m, sec = n[0], n[1]
	case 3:
		h, m, sec = n[0], n[1], n[2]
	}
	return time.Duration(days)*24*time.Hour + time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + time.Duration(sec)*time.Second, true
}

// ArrayLogPath is where task index of the job array name writes its log.
func ArrayLogPath(logDir, name string, index int) string {
	return filepath.Join(logDir, fmt.Sprintf("%s.%d.log", name, index))
}

// arrayRefPath records which job array task last ran a node: "<array
// name> <index>".
func arrayRefPath(logDir string, n Node) string {
	return strings.TrimSuffix(LogPath(logDir, n), ".log") + ".array"
}

// arrayRef is a node's task in the job array it was last submitted in.
type arrayRef struct {
	name  string
	index int
}

// arrayRefs reads the array task each uncached node was last submitted
// as, where it was one.
func (s *Submitter) arrayRefs(nodes []Node) map[string]arrayRef {
	refs := map[string]arrayRef{}
	for _, n := range nodes {
		if n.Cached {
			continue
		}
		b, err := os.ReadFile(arrayRefPath(s.LogDir, n))
		if err != nil {
			continue
		}
		var r arrayRef
		if k, _ := fmt.Sscanf(string(b), "%s %d", &r.name, &r.index); k == 2 {
			refs[n.Name] = r
		}
	}
	return refs
}

// jobNames are the job names a plan's uncached nodes may have jobs under:
// each node's own and the arrays they were submitted in.
func jobNames(nodes []Node, refs map[string]arrayRef) []string {
	var names []string
	seen := map[string]bool{}
	for _, n := range nodes {
		if n.Cached {
			continue
		}
		for _, name := range []string{JobName(n.Recipe), refs[n.Name].name} {
			if name != "" && !seen[name] {
				seen[name] = true
				names = append(names, name)
			}
		}
	}
	return names
}

// findJob is a node's newest job: one of its own name, or its task in the
// array it was last submitted in (a mem_retry job after an array task is
// newer, and wins).
func findJob(n Node, ref arrayRef, jobs []Job) (Job, bool) {
	var best Job
	found := false
	for _, j := range jobs {
		mine := j.Name == JobName(n.Recipe)
		if !mine && ref.name != "" && j.Name == ref.name {
			mine = j.CoversTask(ref.index)
		}
		if mine && (!found || jobNum(j.ID) > jobNum(best.ID)) {
			best, found = j, true
		}
	}
	return best, found
}

// logOf is the log of a node's job j.
func (s *Submitter) logOf(n Node, ref arrayRef, j Job, known bool) string {
	if known && ref.name != "" && j.Name == ref.name {
		return ArrayLogPath(s.LogDir, ref.name, ref.index)
	}
	return LogPath(s.LogDir, n)
}

// OutOfMemory says whether a job state is Slurm's out-of-memory end.
func OutOfMemory(state string) bool { return strings.HasPrefix(state, "OUT_OF_MEMORY") }

// sbatchArgs are one job's sbatch flags. singleton (no two jobs of one
// name run at once) makes two submissions racing past each other's squeue
// compute a stage once: the second job starts after the first ends and
// finds its output in the store. It does not hold back an array's own
// tasks from each other (seen on Slurm 22.05).
func (s *Submitter) sbatchArgs(name, comment, output, dep string, r Resources) []string {
	args := []string{
		"--job-name=" + name,
		"--comment=" + comment,
		"--output=" + output, "--error=" + output, "--open-mode=append",
		"--dependency=" + dep, "--kill-on-invalid-dep=yes",
		"--requeue", fmt.Sprintf("--signal=B:USR1@%d", s.Site.signalSeconds()),
		"--chdir=" + s.Dir,
		// The submitter's environment less its own job's SLURM_* (see
		// submitEnv), stated rather than left to the site's default.
		"--export=ALL",
	}
	return append(args, r.Args()...)
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
func writeScript(path, body string) error { return writeFile(path, body, 0o755) }

// writeFile writes a file of the log dir by rename (see writeScript).
func writeFile(path, body string, perm os.FileMode) error {
	return artifacts.WriteFileAtomic(path, []byte(body), perm)
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
