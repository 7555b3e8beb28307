// Generated from the daemon's OpenAPI document (GET /v1/openapi.json) by scripts/api-types.mjs
// with openapi-typescript: do not edit. Regenerate with `npm run api-types -- PATH/openapi.json`.

export interface paths {
    "/healthz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Liveness, the daemon's version and its role (active or standby) */
        get: operations["get_healthz"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/metrics": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Prometheus text exposition (without a token when the daemon runs with --metrics-public) */
        get: operations["get_metrics"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/audit": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Every change made through the API, oldest first; pages continue with cursor=next */
        get: operations["get_v1_audit"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/canaries": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Canary jobs the daemon ran, newest first; pages continue with cursor=next */
        get: operations["get_v1_canaries"];
        put?: never;
        /** Run a canary job now, as the schedule would (409 while one runs or when no node is ready); the next scheduled one is an interval later */
        post: operations["post_v1_canaries"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/cluster": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The cluster's own condition: store_problem, since when and why the daemon's store refuses writes (every change is refused meanwhile and the daemon's own wait), absent while it writes */
        get: operations["get_v1_cluster"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/cluster/history": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The cluster over a window (24h by default, up to 7d): cores usable and allocated, queue depth, attempts started and failed by class, and goodput, from the samples the daemon keeps, in time buckets */
        get: operations["get_v1_cluster_history"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Events, oldest first or with order=newest newest first: one's own jobs' and the cluster's (every event for roles that read every job); type is a glob (job.*), and audit.* events, for those that read the audit log, come only when the type names them; after (oldest first) or before (newest first) is an event id to start from; since (RFC 3339, a date, or a span back like 10m) leaves out older events; pages continue with cursor=next */
        get: operations["get_v1_events"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/events/stream": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The events of GET /v1/events as Server-Sent Events, live; from after an id (Last-Event-ID or after) the stored ones first, with no gap and none twice */
        get: operations["get_v1_events_stream"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/goodput": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Goodput of the newest jobs and their total; with window (24h, 7d) the cluster's over that window, from every attempt that ran in it */
        get: operations["get_v1_goodput"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/healthchecks": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Finished health checks, newest first, each with its verdicts, runs and pair tests; pages continue with cursor=next */
        get: operations["get_v1_healthchecks"];
        put?: never;
        /** Start a health check of named nodes */
        post: operations["post_v1_healthchecks"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/healthchecks/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A health check's state, verdicts and collective runs */
        get: operations["get_v1_healthchecks_id"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/jobs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Jobs, newest first (one's own unless the role reads every job), each with its accounting (elapsed, wait, cores, core-hours, goodput), an array as one row with its tasks counted by state; ?array=ID lists that array's tasks; state is a comma-separated list; since and until bound the submit time (RFC 3339, a date, or a span back like 1d); before and after bound the id; pages of limit (default 100) continue with cursor=next */
        get: operations["get_v1_jobs"];
        put?: never;
        /** Submit a job; answered once it is on disk */
        post: operations["post_v1_jobs"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/jobs/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A job with its goodput; pending jobs carry pending_reason and queue_position */
        get: operations["get_v1_jobs_id"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /** Change a pending job's priority, timeout_s or nodes (an owner only lowers priority and shortens the time limit; an admin anything), validated as a submission; an array's id changes all its pending tasks, ID_N one task */
        patch: operations["patch_v1_jobs_id"];
        trace?: never;
    };
    "/v1/jobs/{id}/attempts": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The job's attempts with nodes, exit code, failure class and reason */
        get: operations["get_v1_jobs_id_attempts"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/jobs/{id}/attempts/{n}/provenance": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Everything attempt n (1-based, or last) of the job depended on: versions, spec and its SHA-256, kernel, resumed checkpoint, nodes and the health checks that admitted them, masked environment, the job's own facts */
        get: operations["get_v1_jobs_id_attempts_n_provenance"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/jobs/{id}/cancel": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Cancel a job (its own for a user, any for an admin); an array's id cancels all its tasks, ID_N one task */
        post: operations["post_v1_jobs_id_cancel"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/jobs/{id}/checkpoints": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The job's checkpoints and whether a retry may resume from each */
        get: operations["get_v1_jobs_id_checkpoints"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/jobs/{id}/hold": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Hold a pending job: it keeps its place but is never scheduled until released (an admin's hold only an admin releases); an array's id holds all its pending tasks, ID_N one task */
        post: operations["post_v1_jobs_id_hold"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/jobs/{id}/logs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The tail of each rank's output of an attempt (the newest by default), fetched from the agents */
        get: operations["get_v1_jobs_id_logs"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/jobs/{id}/metrics": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Per-step training metrics of the kept trajectory, downsampled, with gradient-norm spikes */
        get: operations["get_v1_jobs_id_metrics"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/jobs/{id}/release": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Release a held job to the queue; an array's id releases all its held tasks, ID_N one task */
        post: operations["post_v1_jobs_id_release"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/jobs/{id}/requeue": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Stop a running job without using an attempt and queue it again (a simulated job checkpoints first); an array's id requeues all its running tasks, ID_N one task */
        post: operations["post_v1_jobs_id_requeue"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/nodes": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Registered nodes by name: state is a comma-separated list, label KEY=VALUE, name_prefix a prefix; every match without limit, else pages of limit that continue with cursor=next */
        get: operations["get_v1_nodes"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/nodes/{name}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One node */
        get: operations["get_v1_nodes_name"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/nodes/{name}/credential": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Forget a disconnected node's own credential, so it may join again */
        delete: operations["delete_v1_nodes_name_credential"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/nodes/{name}/drain": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Take a node out of service (the body is optional) */
        post: operations["post_v1_nodes_name_drain"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/nodes/{name}/faults": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        /** Replace the node's simulated faults (applied by its agent) */
        put: operations["put_v1_nodes_name_faults"];
        post?: never;
        /** Clear the node's simulated faults */
        delete: operations["delete_v1_nodes_name_faults"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/nodes/{name}/health": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The node's health history, newest first; pages continue with cursor=next */
        get: operations["get_v1_nodes_name_health"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/nodes/{name}/undrain": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Return a node to service; an UNHEALTHY one through a health check */
        post: operations["post_v1_nodes_name_undrain"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/openapi.json": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** This API as an OpenAPI 3.1 document, generated from the route table */
        get: operations["get_v1_openapi_json"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/queue": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Pending jobs in the scheduler's order (yours only, unless your role reads every job); next is the offset of the next page */
        get: operations["get_v1_queue"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/shares": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The fair-share table (admins also see members) */
        get: operations["get_v1_shares"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/shares/{name}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        /** Create or change a share */
        put: operations["put_v1_shares_name"];
        post?: never;
        /** Delete a share made by mistake, with its settings, members and usage: only while no job is pending or running in it (409 naming one otherwise); jobs that ended in it keep its name */
        delete: operations["delete_v1_shares_name"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tokens": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Tokens without their secrets: every one for an admin, one's own for others; all without limit, else pages that continue with cursor=next */
        get: operations["get_v1_tokens"];
        put?: never;
        /** Create a token; its secret is shown once */
        post: operations["post_v1_tokens"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tokens/join/rotate": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Replace the agents' join token; joined nodes keep their credentials */
        post: operations["post_v1_tokens_join_rotate"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tokens/{token_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Revoke a token at once (one's own, or any for an admin) */
        delete: operations["delete_v1_tokens_token_id"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Webhooks without their secrets: every one for an admin, one's own for others */
        get: operations["get_v1_webhooks"];
        put?: never;
        /** Create a webhook; its signing secret is shown once (users: their own jobs' events, allowed hosts only) */
        post: operations["post_v1_webhooks"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A webhook and its cursor */
        get: operations["get_v1_webhooks_id"];
        put?: never;
        post?: never;
        /** Delete a webhook and its deliveries (one's own, or any for an admin) */
        delete: operations["delete_v1_webhooks_id"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/{id}/deliveries": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The webhook's deliveries, newest first, each with its attempts; pages continue with cursor=next */
        get: operations["get_v1_webhooks_id_deliveries"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/{id}/deliveries/{n}/retry": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Send a dead-lettered delivery again */
        post: operations["post_v1_webhooks_id_deliveries_n_retry"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/{id}/test": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Send a signed test message now and report the receiver's answer */
        post: operations["post_v1_webhooks_id_test"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/whoami": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The caller: its user, role and token id (the dashboard decides what to show from it) */
        get: operations["get_v1_whoami"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        AcceleratorCheck: {
            duration_ms: number;
            /** @description the most measured may be to pass */
            limit: number;
            measured: number;
            reason: string;
            /** @enum {unknown} */
            status: "passed" | "failed" | "timed_out" | "crashed" | "skipped";
            /** @enum {unknown} */
            test: "gemm" | "stochastic_rounding" | "memory";
        };
        AcceleratorReport: {
            cores: {
                checks: components["schemas"]["AcceleratorCheck"][];
                core: number;
                /** @description the fastest GEMM's time; absent in checks stored before protocol 16 */
                gemm_ms?: number;
            }[];
            duration_ms: number;
        };
        Attempt: {
            /** @description checkpoint writes that failed (the most any rank reported) and the last one's error; absent when none failed */
            checkpoint_failures?: {
                count: number;
                last_error: string;
            };
            /** @description time the ranks spent writing checkpoints */
            checkpoint_ms?: number;
            cores_per_node?: number;
            /** Format: date-time */
            created_at?: string;
            /** @description why a stuck attempt was stopped: the rank, its phase, what the others did */
            diagnosis?: string;
            /** Format: date-time */
            ended_at?: string;
            exit_code?: number;
            failure_class?: string;
            /** Format: date-time */
            first_step_at?: string;
            id: number;
            /** @description the failure was the cluster's, not the job's: the attempt does not count against its retries */
            infrastructure?: boolean;
            job_id: number;
            /** Format: date-time */
            last_progress_at?: string;
            last_step?: number;
            /** Format: date-time */
            launched_at?: string;
            nodes: string[];
            number: number;
            /** @description the first failed rank's last output lines (masked, at most 10 lines, 1,500 characters) */
            output?: string;
            /** @description the rank whose output that is */
            output_rank?: number;
            provenance?: components["schemas"]["Provenance"];
            reason?: string;
            /** @description the checkpoint directory the attempt resumed from */
            resumed_from?: string;
            signal?: number;
            /** Format: date-time */
            started_at?: string;
            /** @enum {unknown} */
            state?: "STARTING" | "RUNNING" | "SUCCEEDED" | "FAILED" | "CANCELLED" | "REQUEUED" | "PREEMPTED";
            steps_completed?: number;
            /** @description ranks whose time per step ran at 1.5x or more the median of the other ranks' for 3 windows of 10 steps */
            stragglers?: {
                /** Format: date-time */
                found_at: string;
                node: string;
                rank: number;
                ratio: number;
            }[];
            /** Format: date-time */
            stuck_detected_at?: string;
        };
        AttemptList: {
            attempts: components["schemas"]["Attempt"][];
        };
        AuditLog: {
            events: {
                action?: string;
                at?: string;
                details?: Record<string, unknown>;
                id?: number;
                remote?: string;
                role?: string;
                route?: string;
                target?: string;
                user?: string;
            }[];
            next: components["schemas"]["Cursor"];
        };
        /** @description bus bandwidth in bytes per second by collective, where it was measured exactly */
        BusbwByCollective: {
            [key: string]: number;
        };
        CanaryList: {
            canaries: components["schemas"]["Job"][];
            next: components["schemas"]["Cursor"];
            /** @description when the next scheduled canary is due; null when canaries are off (--canary-interval-s 0) */
            next_run_at: string | null;
        };
        CheckpointList: {
            checkpoints: {
                path: string;
                problem: string;
                recorded_by_attempt: number | null;
                step: number;
                valid: boolean;
            }[];
        };
        ClusterHistory: {
            /** @description whether buckets carry attempts and goodput: only for roles that read every job */
            activity: boolean;
            bucket_s: number;
            /** @description oldest first; a stretch without samples (the daemon down) has no bucket */
            buckets: components["schemas"]["HistoryBucket"][];
            /** Format: date-time */
            from: string;
            /** @description how often the daemon samples (--history-interval-s); 0: history is off */
            sample_interval_s: number;
            /** Format: date-time */
            to: string;
            window_s: number;
        };
        ClusterStatus: {
            /** @description while the store's writes fail; absent while they succeed */
            store_problem?: {
                /** @description the store's words for its latest failure */
                error: string;
                /** Format: date-time */
                since: string;
            };
        };
        CollectiveRun: {
            /** @description rank i ran on nodes[i] */
            nodes: string[];
            ranks: components["schemas"]["RankCollectiveResult"][];
        };
        CredentialForgotten: {
            /** @constant */
            credential: "forgotten";
            node: string;
        };
        /** @description opaque: pass it as cursor, with the same filters, for the next page; null on the last page */
        Cursor: string | null;
        DrainRequest: {
            reason?: string;
            /** @default false */
            stop_attempts?: boolean;
        };
        Error: {
            error: {
                /** @description stable: invalid_field, invalid_json, invalid_query, invalid_id, unauthorized, forbidden, not_found, method_not_allowed, conflict, rate_limited, too_many_pending, unavailable, internal */
                code: string;
                /** @description the field, query parameter or path part that was wrong */
                field?: string;
                message: string;
            };
        };
        Event: {
            attempt?: number;
            details: Record<string, unknown>;
            id: number;
            job?: number;
            message: string;
            node?: string;
            /** @enum {string} */
            severity: "info" | "warning" | "error";
            share?: string;
            time: string;
            type: string;
            user?: string;
        };
        EventList: {
            events: components["schemas"]["Event"][];
            next: components["schemas"]["Cursor"];
        };
        /** @description Server-Sent Events: per event `id: <seq>`, `event: <type>` and `data: <the Event as one line of JSON>`, then a blank line; `: keep-alive` comments between them */
        EventStream: string;
        FaultsAccepted: {
            faults: string[];
            message: string;
            node: string;
        };
        FaultsRequest: {
            faults: string[];
        };
        /** @description allocated and productive core-seconds, and what was lost by cause */
        Goodput: {
            allocated_core_s: number;
            /** @description productive share of the measured core-time (allocated less unmeasured), 0 to 1; null when under 1 core-s was measured */
            goodput: number | null;
            /** @description why goodput is null */
            goodput_note?: string;
            lost_core_s: {
                [key: string]: number;
            };
            productive_core_s: number;
            /** @description running time of attempts that reported no step: neither kept nor lost */
            unmeasured_core_s?: number;
        };
        GoodputReport: {
            cluster: components["schemas"]["Goodput"];
            jobs: {
                job_id?: number;
                name?: string;
                state?: components["schemas"]["JobState"];
            }[];
            /** @description only with ?window=: the figures are the core-time that fell in it */
            window?: {
                from: string;
                to: string;
            };
        };
        HealthCheck: {
            /** @description each tested node's accelerator suite, by node name */
            accelerator: {
                [key: string]: components["schemas"]["AcceleratorReport"];
            };
            /** @description the collective suite over all the nodes first, then each pair test */
            collective_runs: components["schemas"]["CollectiveRun"][];
            /** Format: date-time */
            created_at: string;
            duration_ms?: number;
            /** @description why the check could not go on, when it could not (a suite it would not send: more ranks than the protocol allows); such a check is FAILED and judges no node by the suite it did not send */
            error?: string;
            /** @description why a node could not be tested, by node name */
            errors: {
                [key: string]: string;
            };
            /** Format: date-time */
            finished_at?: string;
            id: number;
            /** @description what started it: on_demand for POST /v1/healthchecks */
            kind: string;
            /** @description when pair tests ran: the reference busbw per collective (the median of each node's best), the suspect fraction, and each pair's outcome and busbw */
            localisation?: {
                reference_busbw: components["schemas"]["BusbwByCollective"];
                suspect_fraction: number;
                tests: {
                    busbw: components["schemas"]["BusbwByCollective"];
                    nodes: string[];
                    /** @enum {unknown} */
                    outcome: "passed" | "slow" | "failed";
                    /** @description empty when passed */
                    why: string;
                }[];
            };
            nodes: string[];
            requested_by: string;
            /** @enum {unknown} */
            state: "RUNNING" | "PASSED" | "FAILED";
            suites: ("accelerator" | "collective")[];
            verdicts: components["schemas"]["NodeVerdict"][];
        };
        HealthCheckList: {
            checks: components["schemas"]["HealthCheck"][];
            next: components["schemas"]["Cursor"];
        };
        HealthCheckRequest: {
            nodes: string[];
            suites?: ("accelerator" | "collective")[];
        };
        Healthz: {
            active_url: string;
            epoch: number;
            /** @enum {unknown} */
            role: "active" | "standby";
            /** @enum {unknown} */
            status: "ok" | "degraded";
            /** @description degraded: why the store looks unreachable (no lease renewal confirmed) and when the lease runs out, or since when and why its writes fail */
            store?: string;
            version: string;
        };
        HistoryBucket: {
            allocated_cores: number;
            /**
             * Format: date-time
             * @description the bucket's start
             */
            at: string;
            /** @description allocated core-seconds of the jobs that ended in the bucket */
            ended_core_s?: number;
            /** @description attempts that failed in the bucket, by failure class */
            failed_attempts?: {
                [key: string]: number;
            };
            /** @description productive over ended core-seconds; null when none ended */
            goodput?: number | null;
            pending_jobs: number;
            pending_jobs_max: number;
            productive_core_s?: number;
            running_jobs: number;
            samples: number;
            /** @description attempts that reached RUNNING in the bucket */
            started_attempts?: number;
            /** @description mean over the bucket's samples, as the next four */
            total_cores: number;
            /** @description of connected HEALTHY nodes */
            usable_cores: number;
        };
        Job: {
            /** @description a task of a job array; a folded list row has counts (tasks by state) and no task_id */
            array?: {
                cancelled_tasks?: number;
                counts?: {
                    [key: string]: number;
                };
                held_tasks?: number;
                job_id?: number;
                limit?: number;
                released_tasks?: number;
                requeued_tasks?: number;
                task_count?: number;
                task_id?: number;
                /** @description an array's hold, release, requeue or update: its active tasks it did not change */
                unchanged_tasks?: number;
                updated_tasks?: number;
            };
            /** @description GET /v1/jobs/{id} by an array's own id (not ID_N): the whole array, one state for it and its tasks by state */
            array_tasks?: {
                counts: {
                    [key: string]: number;
                };
                state: components["schemas"]["JobState"];
            };
            attempts?: number;
            ended_at?: string;
            exit_code?: number;
            failure_class?: string;
            goodput?: components["schemas"]["Goodput"];
            /**
             * @description a held job: whose hold it is
             * @enum {unknown}
             */
            held_by?: "owner" | "admin";
            id: number;
            name: string;
            pending_reason?: {
                code?: string;
                message?: string;
            };
            queue_position?: number;
            reason?: string;
            /** @description attempts stopped to queue again (not counted in attempts) */
            requeues?: number;
            share: string;
            spec: components["schemas"]["JobSpec"];
            started_at?: string;
            state: components["schemas"]["JobState"];
            /**
             * @description its attempt is being stopped to queue again
             * @enum {unknown}
             */
            stopping_to?: "requeue" | "preempt";
            storage?: components["schemas"]["JobStorage"];
            /** @description a live job answered from the daemon's memory while the store could not be read: what is left out (goodput, earlier attempts) and why */
            store_unreadable?: string;
            submitted_at: string;
            suggestion?: string;
            user: string;
        };
        JobAccounting: {
            /** @description cores its attempts held, over their lifetime */
            core_hours: number;
            cores: number | null;
            /** @description first start to end (or now); null if it never started */
            elapsed_s: number | null;
            /** @description productive share of the allocated core-time, 0 to 1; null when under 1 core-s was allocated (nothing, or mostly start-up) */
            goodput: number | null;
            nodes: number;
            /** @description submit to first start (or to its end, or now) */
            wait_s: number;
        };
        JobList: {
            jobs: (components["schemas"]["Job"] & {
                accounting?: components["schemas"]["JobAccounting"];
            })[];
            next: components["schemas"]["Cursor"];
            /** @description the list was made from the daemon's memory while the store could not be read: only live jobs, arrays not folded, and why */
            store_unreadable?: string;
        };
        JobLogs: {
            /** @description the array task whose logs these are */
            array?: {
                job_id: number;
                task_id: number;
            };
            attempt: number;
            attempt_id: number;
            job_id: number;
            logs: {
                /** @description why the rank's log could not be read; empty when it was */
                error: string;
                log_bytes: number;
                node: string;
                rank: number;
                text: string;
                truncated: boolean;
            }[];
        };
        JobMetrics: {
            /** @description steps folded into each point */
            bucket_steps: number;
            job_id: number;
            points: {
                attempt_id: number;
                first_step: number;
                grad_norm: number | null;
                grad_norm_max: number | null;
                loss: number | null;
                loss_max: number | null;
                loss_min: number | null;
                lr: number | null;
                non_finite_losses: number;
                param_norm: number | null;
                samples_per_s: number | null;
                spikes: number;
                /** @description the bucket's last step */
                step: number;
            }[];
            spikes: {
                started_at_step: number;
                /** @description null while the loss has not come back */
                steps_to_return: number | null;
            }[];
            /** @description steps reported in all */
            steps: number;
        };
        /** @description validated as a submission; an owner may only lower priority and shorten timeout_s */
        JobPatch: {
            nodes?: number;
            priority?: number;
            timeout_s?: number;
        };
        JobSpec: {
            /** @description a job array: 0-99, 0-99:4, 1,5,9 or a mix, optionally ending in %K (at most K tasks running) */
            array?: string;
            code_version?: string;
            command?: {
                argv: string[];
                env?: {
                    [key: string]: string;
                };
                /** @description a file stderr is copied to, as sbatch -e (patterns as output) */
                error?: string;
                /** @description a file stdout (and stderr unless error is given) is copied to, relative to the working directory, as sbatch -o: %j %x %u %N %n %A %a %% filled in; only the first node writes it unless it names the node (%N, %n) */
                output?: string;
                /** @default 1 */
                procs_per_node?: number;
                /** @description a batch script run in argv[0]'s place by its own #! line (trainyard submit FILE.sbatch) */
                script?: string;
                workdir?: string;
            };
            cores_per_node?: number;
            depends_on?: {
                /**
                 * @default afterok
                 * @enum {unknown}
                 */
                condition?: "afterok" | "afterany" | "afternotok" | "aftercorr";
                job: number;
            }[];
            /**
             * @description submit held: never scheduled until released
             * @default false
             */
            hold?: boolean;
            /**
             * @default command
             * @enum {unknown}
             */
            kind?: "command" | "simulated";
            labels?: {
                [key: string]: string;
            };
            /** @description MiB each node's processes of an attempt may use together; past it they are OOM-killed (class oom) */
            memory_mb?: number;
            /** @description any text without control characters */
            name: string;
            /** @default 1 */
            nodes?: number;
            nodes_min?: number;
            preflight?: boolean;
            priority?: number;
            /**
             * @description a rank named a straggler has the attempt checkpointed and the job queued again without its node
             * @default false
             */
            replace_stragglers?: boolean;
            retry?: {
                attempts?: number;
                evaluate_on_exit?: {
                    /** @enum {unknown} */
                    action: "retry" | "exit" | "RETRY" | "EXIT";
                    on_class?: string;
                    on_exit_code?: string;
                    on_reason?: string;
                }[];
            };
            /** @default default */
            share?: string;
            /** @description checkpoint and log MiB the job may keep; over it its oldest checkpoints are pruned */
            storage_limit_mb?: number;
            /** @description seconds a rank may go without a step before it is stuck; unset: learned from its own steps, max(5 x p99 step interval, 30 s), 10 min until learned */
            stuck_after_s?: number;
            timeout_s?: number;
            /** @default false */
            wait_for_capacity?: boolean;
            workload?: components["schemas"]["Workload"];
        };
        /** @enum {unknown} */
        JobState: "PENDING" | "STARTING" | "RUNNING" | "SUCCEEDED" | "FAILED" | "CANCELLED";
        /** @description what the job keeps on disk (GET /v1/jobs/{id} only) */
        JobStorage: {
            checkpoint_bytes: number;
            /** @description the job's storage_limit_mb */
            limit_mb?: number;
            log_bytes: number;
            /** @description over its own or its share's quota at the latest check */
            over_quota: boolean;
            /** @description its attempts' work directories besides their logs */
            work_bytes: number;
        };
        JoinToken: {
            token: string;
        };
        NewToken: components["schemas"]["Token"] & {
            /** @description the secret, shown once */
            token: string;
        };
        NewWebhook: components["schemas"]["Webhook"] & {
            /** @description the signing secret, shown once */
            secret: string;
        };
        Node: {
            agent_version?: string;
            /** @description a user sees only its own */
            attempts: number[];
            /**
             * @description how the agent contains each attempt: a cgroup per attempt (v1 or v2), or why not
             * @example v1
             * @example v2
             * @example unavailable: the agent is not root
             */
            cgroups?: string;
            connected: boolean;
            cores: number;
            /** @description only to roles that read every job */
            data_addr?: string;
            /** @description free space on its work and checkpoint filesystems (latest heartbeat) */
            disks?: {
                free_mb?: number;
                /** @enum {unknown} */
                role?: "work" | "checkpoint";
                total_mb?: number;
            }[];
            faults?: string[];
            /** @description cores usable now: none on a node that takes no work (not HEALTHY, or not connected) */
            free_cores: number;
            /** @description undrain: the check that returns the node to service */
            health_check_id?: number;
            /**
             * @description whether the agent can give an attempt a network of its own (daemon --job-network), or why not
             * @example netns
             * @example unavailable: the agent is not root
             */
            job_network?: string;
            /**
             * @description the jobs of those attempts, as people name them (an array task as ID_N), in attempt order
             * @example [
             *       "12",
             *       "9_3"
             *     ]
             */
            jobs: string[];
            labels?: {
                [key: string]: string;
            };
            last_heartbeat?: string;
            memory_mb?: number;
            name: string;
            /** @description to users: how many attempts of others run there */
            other_attempts?: number;
            /** @enum {unknown} */
            state: "HEALTHY" | "SUSPECT" | "UNHEALTHY" | "DRAINED" | "DOWN";
            state_reason?: string;
            state_since?: string;
            /** @description cores held by the attempts running on it */
            used_cores: number;
        };
        NodeHealth: {
            checks: components["schemas"]["NodeHealthRecord"][];
            next: components["schemas"]["Cursor"];
            node: string;
        };
        /** @description what one health check found on one node */
        NodeHealthRecord: {
            accelerator?: components["schemas"]["AcceleratorReport"];
            /**
             * Format: date-time
             * @description when the daemon recorded it
             */
            at: string;
            check_id: number;
            /** @description the node's rank in each collective run it took part in */
            collective: {
                nodes: string[];
                result: components["schemas"]["RankCollectiveResult"];
            }[];
            /** @description why the node could not be tested */
            error?: string;
            kind: string;
            reason: string;
            /** @enum {unknown} */
            verdict: "HEALTHY" | "SUSPECT" | "UNHEALTHY" | "NOT_TESTED";
        };
        NodeList: {
            next: components["schemas"]["Cursor"];
            nodes: components["schemas"]["Node"][];
        };
        NodeVerdict: {
            node: string;
            reason: string;
            /** @enum {unknown} */
            state: "HEALTHY" | "SUSPECT" | "UNHEALTHY";
        };
        /** @description this document */
        OpenApiDocument: Record<string, unknown>;
        /** @description Prometheus text exposition format 0.0.4 */
        PrometheusText: string;
        Provenance: {
            attempt: number;
            attempt_id: number;
            checkpoint?: {
                manifest_sha256?: string;
                path: string;
                step: number;
            };
            code_version?: string;
            daemon: {
                commit: string;
                version: string;
            };
            job: number;
            kernel?: Record<string, unknown>;
            ranks: {
                admitted_by?: {
                    health_check: number;
                    verdict: string;
                };
                agent_version: string;
                environment?: {
                    [key: string]: string;
                };
                node: string;
                rank: number;
                user_facts?: Record<string, unknown>;
                user_facts_error?: string;
            }[];
            spec: components["schemas"]["JobSpec"];
            spec_sha256: string;
            user?: string;
        };
        Queue: {
            jobs: components["schemas"]["Job"][];
            /** @description the offset of the next page */
            next: string | null;
            /** @description pending jobs in the queue (the caller's own for users) */
            total: number;
        };
        RankCollectiveResult: {
            collectives: {
                /** @description bytes per second */
                busbw: number;
                bytes: number;
                error: string;
                /** @description every iteration's result was right; only then does busbw count */
                exact: boolean;
                /** @enum {unknown} */
                kind: "all_reduce" | "all_gather" | "reduce_scatter";
                seconds: number;
            }[];
            /** @description why the suite stopped on this rank; empty when it ran to the end */
            error: string;
            /** @description the rank the transport failed on, when it names one */
            failed_peer?: number;
            rank: number;
            /** @description connections this rank's data-plane port refused while the suite ran (outside interference); absent when none */
            refused_connections?: number;
            world_size: number;
        };
        Share: {
            /** @description the share's weight's part of the cluster's usage */
            expected_usage_core_s?: number;
            fair_share_factor?: number;
            /** @description pending and held by their owner or an admin (not in pending_jobs) */
            held_jobs?: number;
            max_running_cores?: number;
            /** @description to admins only */
            members?: string[] | null;
            name: string;
            /** @description usage over the expected usage: above 1 uses more than its part */
            normalized_usage?: number;
            /** @description queued, or waiting on a dependency, a backoff or an array limit */
            pending_jobs?: number;
            running_cores?: number;
            storage_checkpoint_bytes?: number;
            storage_limit_mb?: number;
            storage_log_bytes?: number;
            storage_work_bytes?: number;
            usage_core_s?: number;
            weight: number;
        };
        ShareDeleted: {
            /** @constant */
            deleted: true;
            name: string;
        };
        ShareList: {
            shares: components["schemas"]["Share"][];
        };
        ShareRequest: {
            max_running_cores?: number;
            /** @description the users who may submit to it; without it, every user */
            members?: string[];
            /** @description checkpoint, log and work-directory MiB the share's jobs may keep together */
            storage_limit_mb?: number;
            weight: number;
        };
        Token: {
            created_at: string;
            expires_at: string | null;
            id: string;
            last_used_at: string | null;
            /** @enum {unknown} */
            role: "admin" | "operator" | "user" | "viewer" | "agent";
            user: string;
        };
        TokenList: {
            next: components["schemas"]["Cursor"];
            tokens: components["schemas"]["Token"][];
        };
        TokenRequest: {
            /**
             * @default user
             * @enum {unknown}
             */
            role?: "admin" | "operator" | "user" | "viewer";
            ttl_s?: number;
            user: string;
        };
        TokenRevoked: {
            id: string;
            /** @constant */
            revoked: true;
        };
        Webhook: {
            created_at: string;
            /** @description every event up to this id is delivered, dead-lettered or not wanted */
            cursor: number;
            events: string[];
            filter: Record<string, unknown>;
            /** @enum {unknown} */
            format: "slack" | "json";
            id: number;
            owner: string;
            url: string;
        };
        WebhookDeleted: {
            /** @constant */
            deleted: true;
            id: number;
        };
        WebhookDelivery: {
            attempts: number;
            /** @description in the list: the types of the events it carried, counted (null past the page's budget of 20,000 events) */
            event_types?: {
                [key: string]: number;
            } | null;
            first_attempt_at?: string;
            first_event: number;
            last_event: number;
            log?: {
                at?: string;
                error?: string;
                latency_ms?: number;
                next_retry_at?: string | null;
                status?: number | null;
            }[];
            n: number;
            next_retry_at?: string | null;
            /** @enum {unknown} */
            state: "pending" | "delivered" | "dead" | "retrying";
        };
        WebhookDeliveryList: {
            deliveries: components["schemas"]["WebhookDelivery"][];
            next: components["schemas"]["Cursor"];
        };
        WebhookList: {
            webhooks: components["schemas"]["Webhook"][];
        };
        WebhookRequest: {
            /** @description event types or globs (job.failed, node.*); each must match a type */
            events: string[];
            filter?: {
                job?: number;
                share?: string;
                user?: string;
            };
            /**
             * @default slack
             * @enum {unknown}
             */
            format?: "slack" | "json";
            /** @description http or https, no userinfo */
            url: string;
        };
        WebhookTestResult: {
            delivered: boolean;
            error?: string;
            latency_ms?: number;
            status?: number | null;
        };
        WhoAmI: {
            /** @enum {unknown} */
            role: "admin" | "operator" | "user" | "viewer";
            token_id: string;
            user: string;
        };
        /** @description the simulated kernel's settings (README, The job spec); unset fields take the kernel's defaults */
        Workload: {
            checkpoint_every?: number;
            depth?: number;
            global_batch?: number;
            input_dim?: number;
            keep_checkpoints?: number;
            lr?: number;
            min_lr?: number;
            output_dim?: number;
            /** @enum {unknown} */
            precision?: "fp32" | "bf16" | "bf16_sr" | "FP32" | "BF16" | "BF16_SR";
            seed?: number;
            spike_threshold?: number;
            step_ms?: number;
            steps?: number;
            warmup?: number;
            width?: number;
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    get_healthz: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Liveness, the daemon's version and its role (active or standby) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Healthz"];
                };
            };
            /** @description degraded: the store confirms no lease renewal, or its writes fail */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Healthz"];
                };
            };
            /** @description an error naming what was wrong */
            default: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    get_metrics: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Prometheus text exposition (without a token when the daemon runs with --metrics-public) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/plain; version=0.0.4; charset=utf-8": components["schemas"]["PrometheusText"];
                };
            };
            /** @description an error naming what was wrong */
            default: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    get_v1_audit: {
        parameters: {
            query?: {
                after?: number;
                limit?: number;
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Every change made through the API, oldest first; pages continue with cursor=next */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AuditLog"];
                };
            };
            /** @description an error naming what was wrong */
            default: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    get_v1_canaries: {
        parameters: {
            query?: {
                limit?: number;
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Canary jobs the daemon ran, newest first; pages continue with cursor=next */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CanaryList"];
                };
            };
            /** @description an error naming what was wrong */
            default: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    post_v1_canaries: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Run a canary job now, as the schedule would (409 while one runs or when no node is ready); the next scheduled one is an interval later */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Job"];
                };
            };
            /** @description an error naming what was wrong */
            default: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    get_v1_cluster: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The cluster's own condition: store_problem, since when and why the daemon's store refuses writes (every change is refused meanwhile and the daemon's own wait), absent while it writes */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ClusterStatus"];
                };
            };
            /** @description an error naming what was wrong */
            default: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    get_v1_cluster_history: {
        parameters: {
            query?: {
                window?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The cluster over a window (24h by default, up to 7d): cores usable and allocated, queue depth, attempts started and failed by class, and goodput, from the samples the daemon keeps, in time buckets */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ClusterHistory"];
                };
            };
            /** @description an error naming what was wrong */
            default: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    get_v1_events: {
        parameters: {
            query?: {
                order?: "oldest" | "newest";
                after?: number;
                before?: number;
                since?: string;
                type?: string;
                job?: number;
                node?: string;
                limit?: number;
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Events, oldest first or with order=newest newest first: one's own jobs' and the cluster's (every event for roles that read every job); type is a glob (job.*), and audit.* events, for those that read the audit log, come only when the type names them; after (oldest first) or before (newest first) is an event id to start from; since (RFC 3339, a date, or a span back like 10m) leaves out older events; pages continue with cursor=next */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["EventList"];
                };
            };
            /** @description an error naming what was wrong */
            default: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    get_v1_events_stream: {
        parameters: {
            query?: {
                after?: number;
                type?: string;
                job?: number;
                node?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The events of GET /v1/events as Server-Sent Events, live; from after an id (Last-Event-ID or after) the stored ones first, with no gap and none twice */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/event-stream": components["schemas"]["EventStream"];
                };
            };
            /** @description an error naming what was wrong */
            default: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    get_v1_goodput: {
        parameters: {
            query?: {
                window?: string;
                limit?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Goodput of the newest jobs and their total; with window (24h, 7d) the cluster's over that window, from every attempt that ran in it */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["GoodputReport"];
                };
            };
            /** @description an error naming what was wrong */
            default: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    get_v1_healthchecks: {
        parameters: {
            query?: {
                limit?: number;
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Finished health checks, newest first, each with its verdicts, runs and pair tests; pages continue with cursor=next */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["HealthCheckList"];
                };
            };
            /** @description an error naming what was wrong */
            default: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    post_v1_healthchecks: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["HealthCheckRequest"];
            };
        };
        responses: {
            /** @description Start a health check of named nodes */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["HealthCheck"];
                };
            };
            /** @description an error naming what was wrong */
            default: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    get_v1_healthchecks_id: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A health check's state, verdicts and collective runs */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["HealthCheck"];
                };
            };
            /** @description an error naming what was wrong */
            default: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    get_v1_jobs: {
        parameters: {
            query?: {
                state?: string;
                share?: string;
                user?: string;
                since?: string;
                until?: string;
                limit?: number;
                before?: number;
                after?: number;
                array?: number;
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Jobs, newest first (one's own unless the role reads every job), each with its accounting (elapsed, wait, cores, core-hours, goodput), an array as one row with its tasks counted by state; ?array=ID lists that array's tasks; state is a comma-separated list; since and until bound the submit time (RFC 3339, a date, or a span back like 1d); before and after bound the id; pages of limit (default 100) continue with cursor=next */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["JobList"];
                };
            };
            /** @description an error naming what was wrong */
            default: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    post_v1_jobs: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["JobSpec"];
            };
        };
        responses: {
            /** @description Submit a job; answered once it is on disk */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Job"];
                };
            };
            /** @description an error naming what was wrong */
            default: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    get_v1_jobs_id: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A job with its goodput; pending jobs carry pending_reason and queue_position */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Job"];
                };
            };
            /** @description an error naming what was wrong */
            default: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    patch_v1_jobs_id: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["JobPatch"];
            };
        };
        responses: {
            /** @description Change a pending job's priority, timeout_s or nodes (an owner only lowers priority and shortens the time limit; an admin anything), validated as a submission; an array's id changes all its pending tasks, ID_N one task */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Job"];
                };
            };
            /** @description an error naming what was wrong */
            default: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    get_v1_jobs_id_attempts: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The job's attempts with nodes, exit code, failure class and reason */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AttemptList"];
                };
            };
            /** @description an error naming what was wrong */
            default: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    get_v1_jobs_id_attempts_n_provenance: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
                n: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Everything attempt n (1-based, or last) of the job depended on: versions, spec and its SHA-256, kernel, resumed checkpoint, nodes and the health checks that admitted them, masked environment, the job's own facts */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Provenance"];
                };
            };
            /** @description an error naming what was wrong */
            default: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    post_v1_jobs_id_cancel: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Cancel a job (its own for a user, any for an admin); an array's id cancels all its tasks, ID_N one task */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Job"];
                };
            };
            /** @description an error naming what was wrong */
            default: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    get_v1_jobs_id_checkpoints: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The job's checkpoints and whether a retry may resume from each */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CheckpointList"];
                };
            };
            /** @description an error naming what was wrong */
            default: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    post_v1_jobs_id_hold: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Hold a pending job: it keeps its place but is never scheduled until released (an admin's hold only an admin releases); an array's id holds all its pending tasks, ID_N one task */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Job"];
                };
            };
            /** @description an error naming what was wrong */
            default: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    get_v1_jobs_id_logs: {
        parameters: {
            query?: {
                rank?: number;
                tail?: number;
                attempt?: number;
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The tail of each rank's output of an attempt (the newest by default), fetched from the agents */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["JobLogs"];
                };
            };
            /** @description an error naming what was wrong */
            default: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    get_v1_jobs_id_metrics: {
        parameters: {
            query?: {
                max_points?: number;
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Per-step training metrics of the kept trajectory, downsampled, with gradient-norm spikes */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["JobMetrics"];
                };
            };
            /** @description an error naming what was wrong */
            default: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    post_v1_jobs_id_release: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Release a held job to the queue; an array's id releases all its held tasks, ID_N one task */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Job"];
                };
            };
            /** @description an error naming what was wrong */
            default: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    post_v1_jobs_id_requeue: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Stop a running job without using an attempt and queue it again (a simulated job checkpoints first); an array's id requeues all its running tasks, ID_N one task */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Job"];
                };
            };
            /** @description an error naming what was wrong */
            default: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    get_v1_nodes: {
        parameters: {
            query?: {
                state?: string;
                label?: string;
                name_prefix?: string;
                limit?: number;
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Registered nodes by name: state is a comma-separated list, label KEY=VALUE, name_prefix a prefix; every match without limit, else pages of limit that continue with cursor=next */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["NodeList"];
                };
            };
            /** @description an error naming what was wrong */
            default: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    get_v1_nodes_name: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description One node */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Node"];
                };
            };
            /** @description an error naming what was wrong */
            default: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    delete_v1_nodes_name_credential: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Forget a disconnected node's own credential, so it may join again */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CredentialForgotten"];
                };
            };
            /** @description an error naming what was wrong */
            default: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    post_v1_nodes_name_drain: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                name: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["DrainRequest"];
            };
        };
        responses: {
            /** @description Take a node out of service (the body is optional) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Node"];
                };
            };
            /** @description an error naming what was wrong */
            default: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    put_v1_nodes_name_faults: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                name: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["FaultsRequest"];
            };
        };
        responses: {
            /** @description Replace the node's simulated faults (applied by its agent) */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["FaultsAccepted"];
                };
            };
            /** @description an error naming what was wrong */
            default: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    delete_v1_nodes_name_faults: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Clear the node's simulated faults */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["FaultsAccepted"];
                };
            };
            /** @description an error naming what was wrong */
            default: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    get_v1_nodes_name_health: {
        parameters: {
            query?: {
                limit?: number;
                cursor?: string;
            };
            header?: never;
            path: {
                name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The node's health history, newest first; pages continue with cursor=next */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["NodeHealth"];
                };
            };
            /** @description an error naming what was wrong */
            default: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    post_v1_nodes_name_undrain: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Return a node to service; an UNHEALTHY one through a health check */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Node"];
                };
            };
            /** @description an error naming what was wrong */
            default: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    get_v1_openapi_json: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description This API as an OpenAPI 3.1 document, generated from the route table */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["OpenApiDocument"];
                };
            };
            /** @description an error naming what was wrong */
            default: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    get_v1_queue: {
        parameters: {
            query?: {
                offset?: number;
                limit?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Pending jobs in the scheduler's order (yours only, unless your role reads every job); next is the offset of the next page */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Queue"];
                };
            };
            /** @description an error naming what was wrong */
            default: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    get_v1_shares: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The fair-share table (admins also see members) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ShareList"];
                };
            };
            /** @description an error naming what was wrong */
            default: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    put_v1_shares_name: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                name: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ShareRequest"];
            };
        };
        responses: {
            /** @description Create or change a share */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Share"];
                };
            };
            /** @description an error naming what was wrong */
            default: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    delete_v1_shares_name: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Delete a share made by mistake, with its settings, members and usage: only while no job is pending or running in it (409 naming one otherwise); jobs that ended in it keep its name */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ShareDeleted"];
                };
            };
            /** @description an error naming what was wrong */
            default: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    get_v1_tokens: {
        parameters: {
            query?: {
                limit?: number;
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Tokens without their secrets: every one for an admin, one's own for others; all without limit, else pages that continue with cursor=next */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TokenList"];
                };
            };
            /** @description an error naming what was wrong */
            default: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    post_v1_tokens: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["TokenRequest"];
            };
        };
        responses: {
            /** @description Create a token; its secret is shown once */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["NewToken"];
                };
            };
            /** @description an error naming what was wrong */
            default: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    post_v1_tokens_join_rotate: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Replace the agents' join token; joined nodes keep their credentials */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["JoinToken"];
                };
            };
            /** @description an error naming what was wrong */
            default: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    delete_v1_tokens_token_id: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                token_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Revoke a token at once (one's own, or any for an admin) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TokenRevoked"];
                };
            };
            /** @description an error naming what was wrong */
            default: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    get_v1_webhooks: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Webhooks without their secrets: every one for an admin, one's own for others */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookList"];
                };
            };
            /** @description an error naming what was wrong */
            default: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    post_v1_webhooks: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["WebhookRequest"];
            };
        };
        responses: {
            /** @description Create a webhook; its signing secret is shown once (users: their own jobs' events, allowed hosts only) */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["NewWebhook"];
                };
            };
            /** @description an error naming what was wrong */
            default: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    get_v1_webhooks_id: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A webhook and its cursor */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Webhook"];
                };
            };
            /** @description an error naming what was wrong */
            default: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    delete_v1_webhooks_id: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Delete a webhook and its deliveries (one's own, or any for an admin) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookDeleted"];
                };
            };
            /** @description an error naming what was wrong */
            default: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    get_v1_webhooks_id_deliveries: {
        parameters: {
            query?: {
                before?: number;
                limit?: number;
                cursor?: string;
            };
            header?: never;
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The webhook's deliveries, newest first, each with its attempts; pages continue with cursor=next */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookDeliveryList"];
                };
            };
            /** @description an error naming what was wrong */
            default: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    post_v1_webhooks_id_deliveries_n_retry: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: number;
                n: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Send a dead-lettered delivery again */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookDelivery"];
                };
            };
            /** @description an error naming what was wrong */
            default: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    post_v1_webhooks_id_test: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Send a signed test message now and report the receiver's answer */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookTestResult"];
                };
            };
            /** @description an error naming what was wrong */
            default: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    get_v1_whoami: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The caller: its user, role and token id (the dashboard decides what to show from it) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WhoAmI"];
                };
            };
            /** @description an error naming what was wrong */
            default: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
}
