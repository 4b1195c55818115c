SELECT user_id, user_type
from t_user;