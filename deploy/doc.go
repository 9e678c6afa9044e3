// Package deploy reads back what this directory ships for running vLLM in
// production, so that tests can check it against real tools:
//
//   - prometheus/prometheus.yml: the scrape config for vLLM servers;
//   - prometheus/rules/*.rules.yml: recording rules that give every quantity
//     one name across vLLM versions, and the alert rules built on them;
//   - prometheus/tests/*.yml: their `promtool test rules` unit tests;
//   - grafana/vllm-dashboard.json: the Grafana dashboard.
//
// LoadRules and LoadDashboard parse the files; ExpandVariables turns a
// dashboard query into PromQL; CheckNames holds the one rule about vLLM's
// renamed metrics (every expression reads the current name and, through
// `or`, the old one). README.md in this directory is the user's guide.
package deploy
