"""Batch scheduling: one worker thread per phone claims tasks from the durable queue, runs each as an episode and
reports back; infrastructure failures are retried on another phone, a phone that keeps failing is quarantined and
probed again later, a model endpoint that is down pauses everyone instead of failing every task, Ctrl-C ends every
in-flight episode as ``interrupted``, and a crashed batch is resumed without redoing or duplicating work.

    store = TrajectoryStore.open()
    run = submit(store, "tasks.yaml", name="nightly")
    pool = WorkerPool(store, phones, AgentRunner(store, ModelSettings(["http://gpu:8000/v1"], "ui-venus-2")),
                      run_ids=[run.id], on_event=print)
    pool.run()                                   # until the run has no open task (or Ctrl-C)
    print(summarize_run(store, run.id).to_dict())

Outcome classes: finished / answered / needs_user / blocked / max_steps / loop / timeout and the model's own
errors (parse, invalid_action, unknown_app, model) are results. error:model_unavailable is the endpoint being down;
interrupted is Ctrl-C or a dead worker; every other error:<kind> (device_lost, u2 crash, ...) is the phone's fault.

Modules: jobs (what a runner is handed and returns, outcome classes, events), pool (the phone workers and the pool),
endpoint (the gate that pauses everyone while the model endpoint is down), runner (an agent episode per claim),
runs (submit, run status), recovery (resume after a crash), summary (the run summary), worker_ids.
"""
