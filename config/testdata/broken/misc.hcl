model "m" {
  context_window = 8000
}

context "c" {
  model        = "m"
  instructions = var.undefined

  history {
    window   = 2
    priority = -1
  }

  fresh {
    shares = { tool_outputs = -1, plan = 2 }
  }

  multi_agent {
    window_size         = 3
    max_bytes           = 0
    team_task_max_bytes = 0
    marker_patterns     = ["[NEXT"]
  }
}

context "z" {
  model = "m"

  fresh {
    shares = { plan = 0 }
  }

  multi_agent {
    window_size = -2
  }
}

host {
  log_level  = "loud"
  log_format = "xml"
}
