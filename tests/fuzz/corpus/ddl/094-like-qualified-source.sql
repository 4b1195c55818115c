CREATE TABLE IF NOT EXISTS `_env_prod`.`default`.`copy` LIKE `_env_prod`.`default`.`orig`
