//! The `run_javascript` and `run_python` skills: arguments in, granted
//! files gathered, the snippet run in the sandbox, the outcome shaped by
//! hearth-core.

use futures::FutureExt;
use futures::future::LocalBoxFuture;
use hearth_core::builtin::code::RunArgs;
use hearth_core::builtin::code::output::skill_result;
use hearth_core::builtin::code::protocol::{Language, Limits};
use hearth_core::skill::source::SkillSource;
use hearth_core::{Registry, SkillDefinition, SkillError, SkillOutput, SourceKey, ToolCall};

use std::rc::Rc;

use super::{CodeRun, Sandbox};
use crate::files::Files;
use crate::split::{enter, not_loaded, split_point};

/// The code sandbox's source of skills: runs go to `sandbox`, with the
/// granted files they name read through `files`.
pub struct CodeSkills {
    pub sandbox: Rc<Sandbox>,
    pub files: Rc<Files>,
}

impl SkillSource for CodeSkills {
    fn key(&self) -> SourceKey {
        SourceKey::Code
    }

    fn definitions(&self, _registry: &Registry) -> Vec<SkillDefinition> {
        hearth_core::builtin::code_skills()
    }

    fn execute<'a>(
        &'a self,
        skill: &'a SkillDefinition,
        call: &'a ToolCall,
    ) -> LocalBoxFuture<'a, Result<SkillOutput, SkillError>> {
        let (sandbox, files) = (self.sandbox.clone(), self.files.clone());
        let (skill, call) = (skill.clone(), call.clone());
        let failed = || SkillError::new(not_loaded("running code"));
        async move { enter(run_in_chunk(sandbox, files, skill, call), failed).await }.boxed_local()
    }
}

// Running a snippet (gathering its files, the sandbox's protocol, shaping
// the outcome) is its own chunk, fetched with the first code skill call.
split_point!(
    code_run,
    preload warm_code,
    fn run_in_chunk(
        sandbox: Rc<Sandbox>,
        files: Rc<Files>,
        skill: SkillDefinition,
        call: ToolCall,
    ) -> LocalBoxFuture<'static, Result<SkillOutput, SkillError>> {
        Box::pin(async move { run(&sandbox, &files, &skill, &call).await })
    }
);

/// Runs a code skill's call.
pub async fn run(
    sandbox: &Rc<Sandbox>,
    files: &Files,
    skill: &SkillDefinition,
    call: &ToolCall,
) -> Result<SkillOutput, SkillError> {
    let language = Language::from_skill_id(skill.id.as_str())
        .ok_or_else(|| SkillError::new(format!("'{}' is not a code skill", skill.id)))?;
    let args = RunArgs::parse(&call.arguments).map_err(SkillError::new)?;
    let timeout_ms = args.timeout_ms_or(language, sandbox.time_limit_ms(language));
    let files = files
        .files_for_run(&args.files)
        .await
        .map_err(|e| match e.needs_person() {
            true => SkillError::input_required(e.to_string()),
            false => SkillError::new(e.to_string()),
        })?;
    let session = match language {
        Language::Python if sandbox.persist_python() => Some(
            call.conversation_id
                .clone()
                .unwrap_or_else(|| "default".to_string()),
        ),
        Language::Python | Language::Javascript => None,
    };
    let result = sandbox
        .run(CodeRun {
            language,
            code: args.code,
            input: args.input,
            files,
            timeout_ms,
            session,
            call_id: Some(call.id.clone()),
            conversation: call.conversation_id.clone(),
            limits: Limits::default(),
        })
        .await
        .map_err(|e| SkillError::new(e.to_string()))?;
    skill_result(language, &result.outcome, &result.artifacts, timeout_ms)
}
