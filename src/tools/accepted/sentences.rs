//! The words of an error after acceptance: what resmon did, said from the
//! write's act, its status and id, and whether the call may be repeated.
//! The rule that decides when these are said stays in the parent.

use super::{Accepted, Act};
use crate::backend::WriteCheck;

impl Act {
    /// What this write would have done, and the read that shows whether it
    /// did, for an answer that leaves its outcome unknown (contract-notes 26).
    pub(crate) fn write_check(&self) -> WriteCheck {
        let (would_have, check) = match self {
            Act::Create { noun, tool, lists_all, .. } => (
                format!("created a {noun}"),
                format!(
                    "{lists_all} shows whether it did: check it before calling {tool} again, or there may be two."
                ),
            ),
            Act::Sweep => (
                "started the one-off search".to_string(),
                "list_executions shows whether a run started (a queued one appears once it starts): check it \
                 before calling run_sweep again, or there may be two runs."
                    .to_string(),
            ),
            Act::RoutineRun { routine_id } => (
                format!("started or queued a run of routine {routine_id}"),
                format!(
                    "list_executions with routine_id {routine_id} shows whether a run started (a queued one \
                     appears once it starts): check it before calling run_routine again, or the routine may \
                     run twice."
                ),
            ),
            Act::Switch { routine_id, on } => (
                format!("{} routine {routine_id}", if *on { "activated" } else { "deactivated" }),
                format!(
                    "get_routine {routine_id} shows whether it is on the schedule: check it before calling \
                     {} again.",
                    if *on { "activate_routine" } else { "deactivate_routine" }
                ),
            ),
            Act::Settings { group } => (
                format!("saved the change to the {group} settings"),
                "Check the values in the resmon app's settings before calling update_settings again."
                    .to_string(),
            ),
        };
        WriteCheck { would_have, check }
    }
}

impl Accepted {
    /// What resmon did, said from its status and, once read, its id.
    pub(super) fn did(&self) -> String {
        if self.contradicted {
            return self.accepted_only();
        }
        match &self.act {
            Act::Create { noun, .. } => match self.id {
                Some(id) => format!("resmon created {noun} {id}"),
                None => format!("resmon created a {noun}"),
            },
            // Queued is said by a 202, or by the body's `queued: true` or a
            // queue position; started only by an `execution_id` read under
            // its key. With neither, only that resmon took it (a routine's
            // run: "started or queued") is known, whatever else the body held.
            Act::Sweep => match (self.id, self.says_queued()) {
                (Some(id), false) => format!("resmon started run {id}"),
                (_, true) => "resmon queued the one-off search".to_string(),
                (None, false) => "resmon accepted the one-off search".to_string(),
            },
            Act::RoutineRun { routine_id } => match (self.id, self.says_queued()) {
                (Some(id), false) => format!("resmon started run {id} of routine {routine_id}"),
                (_, true) => format!("resmon queued a run of routine {routine_id}"),
                (None, false) => format!("resmon started or queued a run of routine {routine_id}"),
            },
            Act::Switch { routine_id, on: true } => format!("resmon activated routine {routine_id}"),
            Act::Switch { routine_id, on: false } => format!("resmon deactivated routine {routine_id}"),
            // A 2xx says the write was taken; only a read-back shows what was kept.
            Act::Settings { group } => format!("resmon accepted the change to the {group} settings"),
        }
    }

    /// Whether the status or the answer, as far as it was read, says the
    /// run was queued (`says_queued`, the one reading of it).
    fn says_queued(&self) -> bool {
        self.status == 202
            || self
                .body
                .as_ref()
                .ok()
                .and_then(|reply| reply.json().ok())
                .is_some_and(|answer| super::says_queued(self.status, &answer))
    }

    /// What resmon did, when its answer cannot say more than that it took
    /// the request.
    fn accepted_only(&self) -> String {
        match &self.act {
            Act::Create { noun, .. } => match self.id {
                Some(id) => format!("resmon created {noun} {id}"),
                None => format!("resmon accepted the request to create a {noun}"),
            },
            Act::Sweep => "resmon accepted the one-off search".to_string(),
            Act::RoutineRun { routine_id } => {
                format!("resmon accepted the request to run routine {routine_id}")
            }
            Act::Switch { routine_id, on: true } => {
                format!("resmon accepted the request to activate routine {routine_id}")
            }
            Act::Switch { routine_id, on: false } => {
                format!("resmon accepted the request to deactivate routine {routine_id}")
            }
            Act::Settings { group } => format!("resmon accepted the change to the {group} settings"),
        }
    }

    /// Whether the call may be repeated, and where to see what it did.
    pub(super) fn next(&self) -> String {
        match &self.act {
            // Only what came after the create failed, and for a tool that
            // reads the record back that is the read-back: the read tool
            // failed to show it just now, so it is not said to show it.
            Act::Create { noun, tool, shows_one, lists_all, reads_back } => match (self.id, reads_back) {
                (Some(id), true) => format!(
                    "Do not call {tool} again: {noun} {id} was created even though its read-back did not \
                     show it, and {shows_one} may show it once resmon answers for it."
                ),
                (Some(id), false) => format!(
                    "Do not call {tool} again: {noun} {id} was created; {shows_one} may show it once resmon \
                     answers for it."
                ),
                (None, _) => {
                    format!("Do not call {tool} again, or there will be two: {lists_all} shows the new one.")
                }
            },
            // A queued search has no execution yet: list_executions shows it
            // only once a run slot frees and it starts.
            Act::Sweep if self.says_queued() && !self.contradicted => "Do not call run_sweep again: that \
                would queue or start a second search. This one has no execution yet; resmon starts it by \
                itself when one of its run slots frees, and list_executions shows it once it has started."
                .to_string(),
            // An answer that says both started and queued may mean a queued
            // search, which list_executions does not show yet: the closing
            // holds for either reading.
            Act::Sweep if self.says_queued() => "Do not call run_sweep again: that would start or queue a \
                second search. If this one was queued it has no execution yet; list_executions shows it \
                once it has started."
                .to_string(),
            // Only an execution id read, with nothing saying queued, shows
            // a started run; an answer not read might have said queued, so
            // the closing holds for either (contract-notes 26).
            Act::Sweep if self.id.is_some() => "Do not call run_sweep again: that would start another run; \
                list_executions shows this one."
                .to_string(),
            Act::Sweep => "Do not call run_sweep again: that would start or queue a second search; \
                list_executions shows the run, a queued one once it starts."
                .to_string(),
            Act::RoutineRun { routine_id } => format!(
                "Do not call run_routine again: that would run routine {routine_id} a second time; \
                 list_executions shows the run once it has started."
            ),
            // An answer that contradicted the switch does not show it done.
            Act::Switch { routine_id, .. } if self.contradicted => format!(
                "get_routine {routine_id} shows whether it is on the schedule; check that before calling \
                 again."
            ),
            Act::Switch { routine_id, .. } => {
                format!(
                    "It is done, and repeating the call is not needed; get_routine {routine_id} shows its state."
                )
            }
            // A 2xx says resmon took the write, not which values it kept:
            // only the read-back shows that, and it is what failed here.
            Act::Settings { .. } => "What the group holds now was not read, so which values resmon kept is \
                not known: check them in the resmon app's settings before changing them again (sending \
                the same values again changes nothing more)."
                .to_string(),
        }
    }
}
