//! The installed skills as one library, by name, in a stable order.

use super::package::SkillPackage;

/// Every installed skill, by name, in a stable order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SkillLibrary {
    packages: Vec<SkillPackage>,
}

impl SkillLibrary {
    /// A library of `packages`; when two share a name the first is kept.
    pub fn from_packages(packages: Vec<SkillPackage>) -> Self {
        let mut library = Self::default();
        for p in packages {
            if library.get(p.name()).is_none() {
                library.packages.push(p);
            }
        }
        library
    }

    /// Adds a package, or replaces the one with the same name in place
    /// (re-importing a skill updates it). Returns the replaced package.
    pub fn insert(&mut self, package: SkillPackage) -> Option<SkillPackage> {
        match self
            .packages
            .iter()
            .position(|p| p.name() == package.name())
        {
            Some(i) => Some(std::mem::replace(&mut self.packages[i], package)),
            None => {
                self.packages.push(package);
                None
            }
        }
    }

    pub fn remove(&mut self, name: &str) -> Option<SkillPackage> {
        let i = self.packages.iter().position(|p| p.name() == name)?;
        Some(self.packages.remove(i))
    }

    pub fn get(&self, name: &str) -> Option<&SkillPackage> {
        self.packages.iter().find(|p| p.name() == name)
    }

    pub fn iter(&self) -> impl Iterator<Item = &SkillPackage> {
        self.packages.iter()
    }

    pub fn len(&self) -> usize {
        self.packages.len()
    }

    pub fn is_empty(&self) -> bool {
        self.packages.is_empty()
    }

    /// Names the model may activate: the `activate_skill` enum when the
    /// catalog is inline.
    pub fn model_invocable_names(&self) -> Vec<String> {
        self.packages
            .iter()
            .filter(|p| p.properties.model_invocable())
            .map(|p| p.name().to_string())
            .collect()
    }

    /// Skills for the person's `/name` menu (`user-invocable` not false).
    pub fn user_invocable(&self) -> impl Iterator<Item = &SkillPackage> {
        self.packages.iter().filter(|p| p.properties.user_invocable)
    }
}
