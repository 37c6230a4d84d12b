# ctxhost example: fresh task contexts for a coding agent, with code
# context. Every task gets the repository map (its best-ranked
# definitions for the task) and the codebase docs, each within a fixed
# allocation, the task's own files and the code search results for the
# task, fitted to the token budget. Run it
# from the repository root with
#
#   bin/ctxhost run -config examples/code.hcl examples/code-tasks.jsonl
#
# A task arrives as the input: plain text, or a JSON object with
# name/title, description, files, dependencies, testCriteria,
# acceptanceCriteria, codeSearchQuery and options (includeRepoMap,
# includeCodebaseDocs, maxRelevantFiles, maxCodeResults, codeSearchQuery).

variable "bin_dir" {
  description = "where `make build` put the plugin binaries (relative to this file)"
  default     = "../bin"
}

variable "repo" {
  description = "the repository the agent works on (relative to where ctxhost runs)"
  default     = "examples/code/shop"
}

variable "index_dir" {
  description = "where code search keeps its index (empty: under the user's cache directory)"
  default     = ""
}

model "worker" {
  context_window        = 6000
  reserved_for_response = 1000
  encoding              = "cl100k_base"
}

# The first task waits for the repository to be indexed.
plugin "repo_map" {
  path    = "${var.bin_dir}/ctxhost-plugin-repomap"
  timeout = "60s"
  config {
    root      = var.repo
    max_tokens = 600
  }
}

plugin "code_search" {
  path    = "${var.bin_dir}/ctxhost-plugin-codesearch"
  timeout = "60s"
  config {
    root        = var.repo
    index_dir   = var.index_dir
    max_results = 3
    # optional: an OpenAI-compatible embeddings endpoint re-ranks the results
    # embedding_url   = "http://localhost:8080/v1/embeddings"
    # embedding_model = "nomic-embed-code"
  }
}

plugin "codebase_docs" {
  path = "${var.bin_dir}/ctxhost-plugin-codebasedocs"
  config {
    root = var.repo
  }
}

plugin "relevant_files" {
  path = "${var.bin_dir}/ctxhost-plugin-relevantfiles"
  config {
    root = var.repo
  }
}

plugin "tool_outputs" {
  path = "${var.bin_dir}/ctxhost-plugin-tooloutput"
}

assembler "claude" {
  path = "${var.bin_dir}/ctxhost-assembler-claude"
}

context "coder" {
  model     = "worker"
  mode      = "fresh"
  assembler = "claude"

  system_prompt = "You are a careful Python engineer. Each task arrives with the code it needs; do only that task."

  fresh {
    system_prompt_tokens = 100
    task_spec_tokens     = 300
    reserved_tokens      = 1000
    repo_map_tokens      = 600
    codebase_docs_tokens = 200
    root                 = "code/shop"
    shares = {
      relevant_files = 0.6
      code_search    = 0.25
      tool_outputs   = 0.15
    }
  }
}

host {
  log_level = "warn"
}
