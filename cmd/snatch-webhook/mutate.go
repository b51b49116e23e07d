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

// mutate answers "why was my Pod not mutated?" without a cluster: it runs the
// webhook's own decoder and decision on one Pod manifest as for a CREATE, and
// prints the decision, the reason, the patch and the Pod with the patch applied
// by the API server's JSON patch library.
func (c *cli) mutate(args []string) error {
	policy := affinity.DefaultPolicy()
	file, output, err := c.parseMutateFlags(args, &policy)
	if err != nil {
		return err
	}
	m, err := affinity.NewMutator(policy)
	if err != nil {
		return cmdline.UsageError{Err: err}
	}
	var in []byte
	if file == "-" {
		if in, err = io.ReadAll(c.stdin); err != nil {
			return fmt.Errorf("read standard input: %w", err)
		}
	} else if in, err = os.ReadFile(file); err != nil {
		return fmt.Errorf("read the Pod: %w", err)
	}
	d, pod, err := mutatePod(m, in)
	if err != nil {
		return err
	}
	return printPod(c.stdout, c.stderr, output, d, pod)
}

// parseMutateFlags parses mutate's flags into policy and returns the file
// and the output format, or a usage error naming every flag that is wrong.
func (c *cli) parseMutateFlags(args []string, policy *affinity.Policy) (file, output string, err error) {
	fs := flag.NewFlagSet(binaryName+" mutate", flag.ContinueOnError)
	fs.SetOutput(c.stderr)
	fs.StringVar(&file, "f", "", `Pod manifest to decide on, YAML or JSON; "-" reads standard input.`)
	fs.StringVar(&output, "o", "yaml", "Output format of the Pod: yaml or json.")
	policy.BindFlags(fs)
	fs.Usage = func() {
		fmt.Fprintf(c.stderr,
			"Usage: %s mutate -f FILE|- [flags]\n\nShows what the webhook decides for a Pod, why, "+
				"and the mutated Pod. No cluster is needed.\n\nFlags:\n", binaryName)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		return "", "", err
	} else if err != nil {
		return "", "", cmdline.UsageError{Err: err}
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
		return "", "", cmdline.UsageError{Err: err}
	}
	return file, output, nil
}

// mutatePod decides on the Pod's canonical encoding, as the API server sends
// it, and applies the patch to the manifest as given (returned as JSON), so
// that the output is the user's Pod plus the term.
func mutatePod(m *affinity.Mutator, manifest []byte) (d affinity.Decision, patched []byte, err error) {
	doc, err := yaml.YAMLToJSON(manifest)
	if err != nil {
		return d, nil, fmt.Errorf("the input is not YAML or JSON: %w", err)
	}
	var head struct{ APIVersion, Kind string }
	if err := json.Unmarshal(doc, &head); err != nil {
		return d, nil, fmt.Errorf("the input is not a single object: %w", err)
	}
	if head.Kind != "Pod" || (head.APIVersion != "v1" && head.APIVersion != "") {
		return d, nil, fmt.Errorf("the input is a %q of %q, want a v1 Pod", head.Kind, head.APIVersion)
	}
	pod := &corev1.Pod{}
	if err := json.Unmarshal(doc, pod); err != nil {
		return d, nil, fmt.Errorf("the input is not a valid Pod: %w", err)
	}
	canonical, err := json.Marshal(pod)
	if err != nil {
		return d, nil, fmt.Errorf("encode the Pod: %w", err)
	}
	if d, err = admission.DecidePod(m, canonical); err != nil || !d.Patched() {
		return d, doc, err // no decision, or nothing to apply
	}
	patch, err := jsonpatch.DecodePatch(d.Patch)
	if err != nil {
		return d, nil, fmt.Errorf("decode the patch: %w", err)
	}
	if doc, err = patch.Apply(doc); err != nil {
		return d, nil, fmt.Errorf("apply the patch: %w", err)
	}
	return d, doc, nil
}

// printPod writes the Pod to stdout. In YAML the decision goes before it as
// comments, so that the output can be piped on (to kubectl apply
// --dry-run=server -f -); JSON has no comments, so there the decision goes to
// stderr and stdout stays a plain JSON document.
func printPod(stdout, stderr io.Writer, output string, d affinity.Decision, pod []byte) error {
	decision, patch := "unchanged", ""
	if d.Patched() {
		decision, patch = "patched", fmt.Sprintf("# patch: %s\n", d.Patch)
	}
	header := fmt.Sprintf("# decision: %s\n# reason: %s\n# detail: %s\n%s", decision, d.Reason, d.Message, patch) +
		"# scope: the API server calls the webhook only for Pod CREATEs in namespaces labelled\n" +
		"#   operator.kyma-project.io/managed-by=kyma (kube-system excluded), as set in the MutatingWebhookConfiguration.\n"
	if output == "yaml" {
		out, err := yaml.JSONToYAML(pod)
		if err != nil {
			return fmt.Errorf("print the Pod: %w", err)
		}
		_, err = fmt.Fprint(stdout, header, "---\n", string(out))
		return err
	}
	var v any
	if err := json.Unmarshal(pod, &v); err != nil {
		return fmt.Errorf("print the Pod: %w", err)
	}
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("print the Pod: %w", err)
	}
	if _, err := fmt.Fprint(stderr, header); err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s\n", out)
	return err
}
