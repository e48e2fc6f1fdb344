//! Components several places use, and the services that show dialogs of
//! their own (an agent signing in): the modal dialog ([`modal`]), where
//! focus goes back when a dialog closes ([`focus`]), the confirmation for
//! destructive actions ([`confirm`]), the undo notice ([`toast`]), the
//! approval dialog ([`approval`]), the shell's status notices
//! ([`offline`], [`set_aside`]), Python's loading state ([`python`]), pictures opened large
//! ([`picture`]) and the copy buttons of rendered Markdown ([`markdown`]).
//! Nothing here names a place.

pub mod approval;
pub mod confirm;
pub mod focus;
pub mod markdown;
pub mod modal;
pub mod offline;
pub mod picture;
pub mod python;
pub mod set_aside;
pub mod toast;
