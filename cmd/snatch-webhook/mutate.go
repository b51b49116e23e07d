package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/kyma-project/kim-snatch/pkg/admission"
	"github.com/kyma-project/kim-snatch/pkg/affinity"
	"github.com/kyma-project/kim-snatch/pkg/cmdline"
)

// mutate answers the operator's question "why was my Pod not mutated?" (or
// "what would the webhook do to it?") without a cluster. It reads one Pod
// manifest, runs the webhook's own decoder and decision on it as for a
// CREATE, and prints the decision, the reason, the patch and the Pod with
// the patch applied by the API server's JSON patch library.
//
// The output is YAML whose header lines are comments, so it can be piped
// on (for example to kubectl apply --dry-run=server -f -).
func (c *cli) mutate(args []string) error {
	policy := affinity.DefaultPolicy()
	var file, output string
	fs := flag.NewFlagSet(binaryName+" mutate", flag.ContinueOnError)
	fs.SetOutput(c.stderr)
	fs.StringVar(&file, "f", "", `Pod manifest to decide on, YAML or JSON; "-" reads standard input.`)
	fs.StringVar(&output, "o", "yaml", "Output format of the Pod: yaml or json.")
	bindPolicyFlags(fs, &policy)
	fs.Usage = func() {
		fmt.Fprintf(c.stderr, "Usage: %s mutate -f FILE|- [flags]\n\nShows what the webhook decides for a Pod, why, and the mutated Pod. No cluster is needed.\n\nFlags:\n", binaryName)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return cmdline.UsageError{Err: err}
	}
	var errs []error
	if file == "" {
		errs = append(errs, errors.New("mutate: -f is required (a file, or - for standard input)"))
	}
	if output != "yaml" && output != "json" {
		errs = append(errs, fmt.Errorf("mutate: -o must be yaml or json, got %q", output))
	}
	if fs.NArg() > 0 {
		errs = append(errs, fmt.Errorf("mutate: unexpected arguments: %q", fs.Args()))
	}
	errs = append(errs, policy.Validate())
	if err := errors.Join(errs...); err != nil {
		return cmdline.UsageError{Err: err}
	}
	m, err := affinity.NewMutator(policy)
	if err != nil {
		return cmdline.UsageError{Err: err}
	}

	in, err := c.readInput(file)
	if err != nil {
		return err
	}
	res, err := mutatePod(m, in)
	if err != nil {
		return err
	}
	return res.print(c.stdout, c.stderr, output)
}

func (c *cli) readInput(file string) ([]byte, error) {
	if file == "-" {
		b, err := io.ReadAll(c.stdin)
		if err != nil {
			return nil, fmt.Errorf("read standard input: %w", err)
		}
		return b, nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read the Pod: %w", err)
	}
	return b, nil
}

type mutateResult struct {
	decision affinity.Decision
	pod      []byte // the Pod as given, with the patch applied; JSON
}

// mutatePod decides on a manifest. The decision is made on the Pod's
// canonical encoding, as the API server sends it; the patch is applied to
// the manifest as given, so that the output is the user's own Pod plus the
// term.
func mutatePod(m *affinity.Mutator, manifest []byte) (mutateResult, error) {
	doc, err := yaml.YAMLToJSON(manifest)
	if err != nil {
		return mutateResult{}, fmt.Errorf("the input is not YAML or JSON: %w", err)
	}
	var head struct{ APIVersion, Kind string }
	if err := json.Unmarshal(doc, &head); err != nil {
		return mutateResult{}, fmt.Errorf("the input is not a single object: %w", err)
	}
	if head.Kind != "Pod" || (head.APIVersion != "v1" && head.APIVersion != "") {
		return mutateResult{}, fmt.Errorf("the input is a %q of %q, want a v1 Pod", head.Kind, head.APIVersion)
	}
	pod := &corev1.Pod{}
	if err := json.Unmarshal(doc, pod); err != nil {
		return mutateResult{}, fmt.Errorf("the input is not a valid Pod: %w", err)
	}
	canonical, err := json.Marshal(pod)
	if err != nil {
		return mutateResult{}, fmt.Errorf("encode the Pod: %w", err)
	}
	d, err := admission.DecidePod(m, canonical)
	if err != nil {
		return mutateResult{}, err
	}
	res := mutateResult{decision: d, pod: doc}
	if d.Patched() {
		patch, err := jsonpatch.DecodePatch(d.Patch)
		if err != nil {
			return mutateResult{}, fmt.Errorf("decode the patch: %w", err)
		}
		if res.pod, err = patch.Apply(doc); err != nil {
			return mutateResult{}, fmt.Errorf("apply the patch: %w", err)
		}
	}
	return res, nil
}

// print writes the Pod to stdout. In YAML the decision goes before it as
// comments; JSON has no comments, so there the decision goes to stderr and
// stdout stays a plain JSON document.
func (r mutateResult) print(stdout, stderr io.Writer, output string) error {
	decision := "unchanged"
	if r.decision.Patched() {
		decision = "patched"
	}
	var out []byte
	var err error
	if output == "json" {
		var v any
		if err = json.Unmarshal(r.pod, &v); err == nil {
			out, err = json.MarshalIndent(v, "", "  ")
			out = append(out, '\n')
		}
	} else {
		out, err = yaml.JSONToYAML(r.pod)
	}
	if err != nil {
		return fmt.Errorf("print the Pod: %w", err)
	}
	header := fmt.Sprintf("# decision: %s\n# reason: %s\n# detail: %s\n", decision, r.decision.Reason, r.decision.Message)
	if r.decision.Patched() {
		header += fmt.Sprintf("# patch: %s\n", r.decision.Patch)
	}
	header += "# scope: the API server calls the webhook only for Pod CREATEs in namespaces labelled\n" +
		"#   operator.kyma-project.io/managed-by=kyma (kube-system excluded), as set in the MutatingWebhookConfiguration.\n"
	if output == "json" {
		if _, err := fmt.Fprint(stderr, header); err != nil {
			return err
		}
		_, err = stdout.Write(out)
		return err
	}
	_, err = fmt.Fprint(stdout, header, "---\n", string(out))
	return err
}
